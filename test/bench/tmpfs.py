"""Scratch directories on tmpfs for the scenarios whose outputs must not
touch a disk: creating 5,000 files on a disk file system is what made curl
slow in scenario 1, and the real-pages scenarios measure the clients, not
the file system."""
import atexit
import os
import shutil
import tempfile

CANDIDATES = ("/dev/shm",)


def mount_of(path):
    """(mount point, file system type) of the mount holding path."""
    path = os.path.realpath(path)
    best = ("/", "?")
    with open("/proc/mounts") as fm:
        for line in fm:
            fields = line.split()
            point, fstype = fields[1].replace("\\040", " "), fields[2]
            inside = path == point or path.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best[0]):
                best = (point, fstype)
    return best


def scratch(fallback, name, need_bytes):
    """A fresh directory on a tmpfs with need_bytes free, removed at exit;
    else one under fallback.  Returns (path, note): note is None on tmpfs,
    else says where the outputs went instead."""
    for cand in CANDIDATES:
        if not os.path.isdir(cand) or mount_of(cand)[1] != "tmpfs":
            continue
        st = os.statvfs(cand)
        if st.f_bavail * st.f_frsize < need_bytes:
            continue
        real = tempfile.mkdtemp(prefix=f"sc-bench-{name}-", dir=cand)
        atexit.register(lambda: shutil.rmtree(real, ignore_errors=True))
        # Reached through a symlink outside /dev: sc-sink takes every path
        # under /dev/ for a device and will not create a file there.
        path = os.path.join(fallback, name)
        os.symlink(real, path)
        return path, None
    path = os.path.join(fallback, name)
    os.makedirs(path, exist_ok=True)
    point, fstype = mount_of(path)
    return path, (f"no tmpfs with {need_bytes / 1e6:,.0f} MB free ({', '.join(CANDIDATES)}): "
                  f"outputs are on {point} ({fstype}), so file creation costs are in the figures")


def remove(path):
    """Removes a directory scratch() returned, and the tmpfs one it links to."""
    shutil.rmtree(os.path.realpath(path), ignore_errors=True)
    if os.path.islink(path):
        os.unlink(path)
