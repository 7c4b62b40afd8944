"""The oh-bridge wheel for a platform with no binary of its own.

oh-bridge is a Go binary. Each platform it is built for has a wheel that
carries the binary as its `oh-bridge` script: Linux on x86-64 and ARM64
(glibc or musl), macOS on Intel and Apple silicon. An installer takes
this wheel, which fits any platform, only when none of those fits, or
when it is too old to read their tags. Its `oh-bridge` says so, and how
to build the bridge instead, and exits 1.
"""

import platform
import sys
from importlib.metadata import version

__all__ = ["main"]

# platform.system() and platform.machine() of the platforms with a wheel,
# as Python names them there.
_BUILT_FOR = {("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "x86_64"), ("darwin", "arm64")}


def main():
    v = version("oh-bridge")
    here = (platform.system().lower(), platform.machine().lower())
    name = "-".join(here)
    if here in _BUILT_FOR:
        first = (
            "oh-bridge: this is the oh-bridge {0} wheel without a binary, but this platform ({1}) has a wheel "
            "with one, which the installer did not take. Upgrade the installer (python -m pip install --upgrade pip, "
            "or a newer uv) and install oh-bridge again.".format(v, name)
        )
        then = "Or build the bridge with Go 1.26 or newer:"
    else:
        first = (
            "oh-bridge: the PyPI package oh-bridge {0} has no binary for this platform ({1}); its wheels carry one "
            "for Linux on x86-64 and ARM64 and for macOS on Intel and Apple silicon.".format(v, name)
        )
        then = "Build the bridge with Go 1.26 or newer instead:"
    sys.stderr.write(
        first + "\n" + then + "\n"
        "  go install github.com/oh-bridge/oh-bridge/cmd/oh-bridge@v" + v + "\n"
    )
    return 1
