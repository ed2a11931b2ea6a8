"""Entry point of the scenario unit in the guest: run the scenario the host chose and
leave /payload/out/result.json. The unit powers the guest off afterwards, whatever
happens here."""

import json
import platform
import time
import traceback

import coupling
import enforcement
import faults
import promise
import receive_path
import recount
import scenarios
import seeds
import seeds_acct
import seeds_disk
import seeds_napi
import seeds_pa
import seeds_path
import vmguest


def main() -> None:
    spec = json.loads(open("/payload/scenario.json").read())
    name = spec["scenario"]
    # every result names the kernel it ran on (the host checks it is the one it booted)
    result: dict = {"scenario": name, "kernel_release": platform.release()}
    t0 = time.monotonic_ns()
    install_log = vmguest.read("/payload/out/install.log") or "install.log missing"
    result["install_log"] = install_log
    try:
        if "install.sh failed" in install_log or "payload install done" not in install_log:
            raise RuntimeError(f"installing the payload failed:\n{install_log[-2000:]}")
        # the seeds' experiments (bench/seeds/) live in their own module
        modules = (scenarios, seeds, seeds_disk, seeds_napi, seeds_path, enforcement,
                   receive_path, faults, promise, coupling, seeds_pa, seeds_acct, recount)
        fn = next((getattr(m, "scenario_" + name) for m in modules
                   if hasattr(m, "scenario_" + name)), None)
        if fn is None:
            raise RuntimeError(f"no scenario {name!r}")
        vmguest.mark(f"scenario {name} starts")
        result.update(fn(**spec.get("params", {})))
    except Exception as e:  # the host test reports it with the traceback
        result["error"] = f"{type(e).__name__}: {e}"
        result["traceback"] = traceback.format_exc()
        print(result["traceback"], flush=True)
    result["guest_ns"] = time.monotonic_ns() - t0
    vmguest.write_result(result)
    vmguest.mark(f"scenario {name} done in {result['guest_ns'] / 1e9:.1f}s guest time")


if __name__ == "__main__":
    main()
