// Preloaded into a program (LD_PRELOAD), counts at its exit the copies of a secret left in its
// memory that a core dump or a swap could show: private writable mappings that are neither locked
// nor kept out of core dumps. The secret comes hex-encoded in SECRET_SCAN_HEX, and is held here
// only XORed, so that the scan does not find its own copy; the count goes to stderr as
// "secret-scan: N".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char needle[256];
static size_t needle_length;

static int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static size_t count_in(const unsigned char *start, const unsigned char *end) {
  size_t found = 0;
  for (const unsigned char *p = start; p + needle_length <= end; p++) {
    if ((p[0] ^ 0x5a) != needle[0]) continue;
    size_t i = 1;
    while (i < needle_length && (p[i] ^ 0x5a) == needle[i]) i++;
    if (i == needle_length) found++;
  }
  return found;
}

__attribute__((destructor)) static void scan(void) {
  const char *text = getenv("SECRET_SCAN_HEX");
  if (!text) return;
  size_t length = strlen(text) / 2;
  if (length == 0 || length > sizeof needle) return;
  for (size_t i = 0; i < length; i++) needle[i] = (unsigned char)((hex(text[2 * i]) << 4 | hex(text[2 * i + 1])) ^ 0x5a);
  needle_length = length;
  FILE *smaps = fopen("/proc/self/smaps", "r");
  if (!smaps) return;
  char line[512];
  unsigned long start = 0, end = 0;
  char perms[8] = "";
  char name[256] = "";
  size_t found = 0;
  while (fgets(line, sizeof line, smaps)) {
    unsigned long a, b;
    char p[8];
    if (sscanf(line, "%lx-%lx %7s", &a, &b, p) == 3 && strchr(line, '-') < strchr(line, ' ')) {
      start = a, end = b;
      strcpy(perms, p);
      name[0] = 0;
      sscanf(line, "%*s %*s %*s %*s %*s %255s", name);
    } else if (strncmp(line, "VmFlags:", 8) == 0) {
      int keptOut = strstr(line, " lo") || strstr(line, " dd");
      int privateWritable = perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p';
      int special = strcmp(name, "[vvar]") == 0 || strcmp(name, "[vsyscall]") == 0 || strcmp(name, "[vdso]") == 0;
      if (!keptOut && privateWritable && !special) found += count_in((const unsigned char *)start, (const unsigned char *)end);
    }
  }
  fclose(smaps);
  fprintf(stderr, "secret-scan: %zu\n", found);
}
