"""_build.py: the PEP 517/660 build backend of python/pyproject.toml.

Standard library only, so `pip install ./python` needs no network (pip's
isolated build environment gets nothing to download): it zips devproc/
into a pure-Python wheel with the metadata pip needs.  Not installed.
"""
import base64
import hashlib
import os
import re
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))


def _meta():
    text = open(os.path.join(_HERE, "pyproject.toml"), encoding="utf-8").read()
    name = re.search(r'^name = "([^"]+)"', text, re.M).group(1)
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    summary = re.search(r'^description = "([^"]+)"', text, re.M).group(1)
    return name, version, summary


def _dist_info():
    name, version, summary = _meta()
    di = "%s-%s.dist-info" % (name, version)
    files = {
        di + "/METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
                           "Requires-Python: >=3.8\n" % (name, version, summary)).encode(),
        di + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: devproc _build.py\n"
                       b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    return name, version, di, files


def _wheel(wheel_directory, files):
    name, version, di, meta = _dist_info()
    files = dict(files)
    files.update(meta)
    whl = "%s-%s-py3-none-any.whl" % (name, version)
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, whl), "w", zipfile.ZIP_DEFLATED) as z:
        for arc in sorted(files):
            data = files[arc]
            z.writestr(zipfile.ZipInfo(arc, (1980, 1, 1, 0, 0, 0)), data)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, h, len(data)))
        record.append(di + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(di + "/RECORD", (1980, 1, 1, 0, 0, 0)),
                   "\n".join(record) + "\n")
    return whl


def _package():
    files = {}
    pkg = os.path.join(_HERE, "devproc")
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            with open(os.path.join(pkg, f), "rb") as fh:
                files["devproc/" + f] = fh.read()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _, _, di, files = _dist_info()
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for arc, data in files.items():
        with open(os.path.join(metadata_directory, arc), "wb") as f:
            f.write(data)
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, _package())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # a .pth file putting this folder on sys.path: edits take effect at once
    return _wheel(wheel_directory, {"devproc_editable.pth": (_HERE + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name, version, _ = _meta()
    base = "%s-%s" % (name, version)
    out = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, out), "w:gz") as t:
        for rel in ["pyproject.toml", "_build.py"] + sorted(_package()):
            t.add(os.path.join(_HERE, rel), base + "/" + rel)
        pkg = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
        import io
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(pkg)
        t.addfile(info, io.BytesIO(pkg.encode()))
    return out
