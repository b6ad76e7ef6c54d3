#ifndef CSYSTEMCALLS_SHIM_H
#define CSYSTEMCALLS_SHIM_H

// What Swift cannot call itself: variadic syscall(2), the CMSG_* macros of SCM_RIGHTS, and
// constants glibc declares only under _GNU_SOURCE (which cannot be defined here: Swift's own
// view of glibc is built without it).
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#define SECRETD_MFD_CLOEXEC 0x0001U
#define SECRETD_MFD_ALLOW_SEALING 0x0002U
#define SECRETD_F_ADD_SEALS 1033
#define SECRETD_F_GET_SEALS 1034
#define SECRETD_F_SEAL_SEAL 0x0001
#define SECRETD_F_SEAL_SHRINK 0x0002
#define SECRETD_F_SEAL_GROW 0x0004
#define SECRETD_MLOCK_ONFAULT 0x01

/// memfd_secret(2): a file of memory removed from the kernel's direct map. -1 and errno on failure.
static inline int secretd_memfd_secret(void) { return (int)syscall(SYS_memfd_secret, O_CLOEXEC); }

/// memfd_create(2) with MFD_CLOEXEC | MFD_ALLOW_SEALING.
static inline int secretd_memfd_sealable(const char *name) {
  return (int)syscall(SYS_memfd_create, name, SECRETD_MFD_CLOEXEC | SECRETD_MFD_ALLOW_SEALING);
}

/// fcntl(2) F_ADD_SEALS: no shrinking, no growing, no more seals.
static inline int secretd_seal_size(int fd) {
  return fcntl(fd, SECRETD_F_ADD_SEALS, SECRETD_F_SEAL_SHRINK | SECRETD_F_SEAL_GROW | SECRETD_F_SEAL_SEAL);
}

/// fcntl(2) F_GET_SEALS.
static inline int secretd_seals(int fd) { return fcntl(fd, SECRETD_F_GET_SEALS); }
static inline int secretd_seal_shrink_flag(void) { return SECRETD_F_SEAL_SHRINK; }

/// mlock2(2) with MLOCK_ONFAULT: pages are locked as they are first touched.
static inline int secretd_lock_on_fault(void *address, size_t length) {
  return (int)syscall(SYS_mlock2, address, length, SECRETD_MLOCK_ONFAULT);
}

/// Sends `length` bytes with the descriptors `fds` (SCM_RIGHTS) on the datagram socket `socket`
/// to the address `address` (a path, or an abstract name starting with '@').
static inline ssize_t secretd_send_with_fds(int socket, const char *address, const void *bytes, size_t length,
                                            const int *fds, int count) {
  struct sockaddr_un target;
  memset(&target, 0, sizeof target);
  target.sun_family = AF_UNIX;
  size_t size = strlen(address);
  if (size == 0 || size >= sizeof target.sun_path) { errno = EINVAL; return -1; }
  memcpy(target.sun_path, address, size);
  if (target.sun_path[0] == '@') target.sun_path[0] = 0;
  struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
  char control[CMSG_SPACE(sizeof(int) * 16)];
  memset(control, 0, sizeof control);
  struct msghdr message = {
      .msg_name = &target,
      .msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + size),
      .msg_iov = &vector,
      .msg_iovlen = 1,
  };
  if (count > 16) { errno = EINVAL; return -1; }
  if (count > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * count);
    memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
  }
  return sendmsg(socket, &message, MSG_NOSIGNAL);
}

/// accept4(2) with SOCK_CLOEXEC.
static inline int secretd_accept_cloexec(int socket) {
  return (int)syscall(SYS_accept4, socket, NULL, NULL, SOCK_CLOEXEC);
}

/// getsockopt(2) SO_PEERCRED: the peer's process and user when it connected. 0 or -1 and errno.
static inline int secretd_peer_credentials(int socket, int *pid, unsigned int *uid) {
  struct { int pid; unsigned int uid; unsigned int gid; } credentials;
  socklen_t length = sizeof credentials;
  if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
  *pid = credentials.pid;
  *uid = credentials.uid;
  return 0;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/// getsockopt(2) SO_PEERPIDFD (Linux 6.5): a pidfd of the process that connected, which no
/// later process can take the place of. The descriptor or -1 and errno.
static inline int secretd_peer_pidfd(int socket) {
  int pidfd = -1;
  socklen_t length = sizeof pidfd;
  if (getsockopt(socket, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
  return pidfd;
}

/// pidfd_open(2) (Linux 5.3). The descriptor (close-on-exec) or -1 and errno.
static inline int secretd_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

// prctl is variadic: make the process non-dumpable (no core, no ptrace by peers).
static inline int secretd_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
static inline int secretd_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
/// Names the calling thread; the kernel keeps its first 15 bytes.
static inline int secretd_set_thread_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

// ioctl is variadic: the bytes waiting to be read on a socket (FIONREAD), or -1.
static inline int secretd_unread_bytes(int fd) {
  int count = 0;
  return ioctl(fd, FIONREAD, &count) == 0 ? count : -1;
}

#endif
