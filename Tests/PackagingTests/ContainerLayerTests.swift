// The container checks (scripts/debian-container, scripts/check-unit-in-container) keep a run's
// changes on a tmpfs they mount, so they work where .build/ sits on an overlay filesystem, as in
// a Docker container: overlayfs refuses an upper directory that is itself on overlayfs.
import Foundation
import SecretTestSupport
import TestGates
import Testing

@Suite("container layers")
struct ContainerLayerTests {
  @Test(
    "a container's layer works where .build is on an overlay filesystem, where an upper directory on that overlay is refused",
    .needsRoot("mounting needs root"))
  func layerOverARootOnOverlay() async throws {
    let script = """
      set -u
      source "$1/scripts/debian-container"
      folder=$(mktemp -d)
      mkdir -p "$folder/lower/root/etc" "$folder/upper" "$folder/work" "$folder/build"
      echo cached > "$folder/lower/root/etc/marker"
      # .build/ on an overlay, as a Docker container's file system is.
      mount -t overlay overlay -o "lowerdir=$folder/lower,upperdir=$folder/upper,workdir=$folder/work" "$folder/build" \\
        || { echo "no overlay here"; exit 3; }
      root=$folder/build/root
      # Control: a layer whose upper directory is on that overlay, as the checks made it before.
      mkdir -p "$folder/build/run/upper" "$folder/build/run/work" "$folder/build/run/merged"
      if mount -t overlay overlay -o "lowerdir=$root,upperdir=$folder/build/run/upper,workdir=$folder/build/run/work" \\
        "$folder/build/run/merged" 2>/dev/null; then echo "control: mounted"; else echo "control: refused"; fi
      container_layer "$root"
      echo changed > "$container/etc/marker"
      echo "layer: $(cat "$container/etc/marker"), below: $(cat "$root/etc/marker"), upper on $(stat -fc %T "$container_run/upper")"
      """
    let run = try await runProcessOnOwnThread(
      "unshare", ["--mount", "--propagation", "private", "bash", "-c", script, "layer-test", packageRoot.path],
      environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
    let output = run.stdoutText + run.stderrText
    if run.status == 77 || output.contains("no overlay here") {
      if SecurityTests.required { Issue.record("cannot mount here: \(output)") } else { try Test.cancel("\(output)") }
    }
    #expect(run.status == 0, "\(output)")
    #expect(output.contains("control: refused"), "overlayfs took an upper directory on overlayfs: \(output)")
    #expect(output.contains("layer: changed, below: cached, upper on tmpfs"), "\(output)")
  }

  @Test(
    "where root may not mount (no CAP_SYS_ADMIN, as in an unprivileged container) each container check says so and exits 77, a skip",
    .needsRoot("dropping a capability needs root to have it"))
  func withoutMountingTheChecksSkip() async throws {
    // setpriv itself, not a script written here: a file this process just wrote may still be open
    // in a child another test forks, and exec would fail with ETXTBSY.
    let withoutSysAdmin = URL(filePath: "/usr/bin/setpriv")
    let dropping = ["--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"]
    for (script, arguments) in [
      (
        "scripts/check-unit-in-container", [try builtExecutable("secretd").path, try builtExecutable("secretctl").path]
      ),
      ("scripts/check-deb-in-container", ["/nonexistent/a.deb", "/nonexistent/b.deb"]),
    ] {
      let check = try await ContainerCheck.run(
        withoutSysAdmin, dropping + [packageRoot.appending(path: script).path] + arguments)
      guard case .cannotRun(let reason) = check else {
        Issue.record("\(script) ran without CAP_SYS_ADMIN: \(check)")
        continue
      }
      #expect(reason.contains("CAP_SYS_ADMIN"), "\(script): \(reason)")
    }
  }
}
