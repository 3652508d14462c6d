"""devproc: write DevProc pipelines (.dp files) from Python.

A pipeline is built up call by call and computes nothing: each call adds a
statement of the pipeline language (formats/dp.md), and save() writes them
as a readable .dp file that `devproc build` compiles like a hand-written one::

    import devproc
    pipe = devproc.pipeline("classify")
    img = pipe.input("image", "u8", (1, 32, 32, 3))
    x = pipe.normalize(img, scale=1/255, mean=[0.485, 0.456, 0.406],
                       std=[0.229, 0.224, 0.225])
    flat = pipe.flatten(pipe.permute(x, dims=[0, 3, 1, 2]), start=1)
    logits = pipe.model("mlp.pt2", flat)        # or a torch.export.ExportedProgram
    pipe.output("label", pipe.argmax(logits, dim=1))
    pipe.output("logits", logits)
    pipe.save("classify.dp")
    exe = pipe.build(target="cpu", builddir="build").executable

Names, dtypes, shapes, keywords and model arguments are checked where a
.dp file's are, by import, so an error reads exactly as it would for the
.dp file: check() runs import alone, build() the whole chain, and both raise
BuildError with the stage's message and the line of Python that made the
statement.  Only the standard library is used; torch is imported only to
save an ExportedProgram.
"""

import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import json

__all__ = ["pipeline", "Pipeline", "Value", "BuildError", "OPS", "DTYPES"]

DTYPES = ("u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bool", "bf16")

# The pipeline ops of formats/dp.md: name -> (keywords in the .dp's order,
# number of results).  model is a method of its own (its archive is
# positional and its result count comes from the archive).
OPS = {
    "cast": (("dtype",), 1),
    "normalize": (("scale", "mean", "std", "axis"), 1),
    "permute": (("dims",), 1),
    "reshape": (("shape",), 1),
    "flatten": (("start", "end"), 1),
    "argmax": (("dim", "keepdim"), 1),
    "softmax": (("dim",), 1),
    "resize": (("size", "crop"), 1),
    "center_crop": (("size",), 1),
    "topk": (("k", "dim"), 2),
    "tokenize": (("file", "length", "pad", "special"), 1),
    "detokenize": (("file", "bytes", "skip"), 1),
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HERE = os.path.dirname(os.path.abspath(__file__))


class BuildError(Exception):
    """A DevProc stage refused the pipeline (or devproc could not run).

    message: the stage's error line as it printed it
    ("classify.dp:7:5: import: unknown op 'normalise'; ...");
    file, line, col, stage: its parts (line and col None for a binary file);
    source: "script.py:12" for the Python call that made the statement the
    error points at, or None; output: everything devproc printed.
    """

    def __init__(self, message, output="", file=None, line=None, col=None,
                 stage=None, source=None):
        self.message, self.output = message, output
        self.file, self.line, self.col, self.stage = file, line, col, stage
        self.source = source
        text = message
        if source:
            text += "\n  (the statement made at %s)" % source
        super().__init__(text)


class Value:
    """A value of the pipeline: an input, or a result of an op or model.

    It holds no data.  name is the name it gets in the .dp file: the input's
    or output's name, else one made from its op (normalize1...); set it to
    choose another before save().
    """

    def __init__(self, pipe, name, fixed):
        self._pipe = pipe
        self._name = name
        self._fixed = fixed     # named by the user (input, output, or .name set)

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, name):
        self._name = name
        self._fixed = True

    def __repr__(self):
        return "<devproc.Value %s of pipeline %s>" % (self.name, self._pipe.name)


class _Stmt:
    def __init__(self, text_fn, outs, source):
        self.text_fn = text_fn  # () -> the statement's text (names as at save)
        self.outs = outs
        self.source = source


def _source():
    """file:line of the first caller outside this package."""
    f = sys._getframe(1)
    while f and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _HERE:
        f = f.f_back
    if not f:
        return None
    return "%s:%d" % (os.path.basename(f.f_code.co_filename), f.f_lineno)


def _fmt(v):
    """A keyword's value as the .dp writes it."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        r = repr(v)     # the shortest text that reads back to the same double
        return r if r not in ("inf", "-inf", "nan") else _bad_value(v)
    if isinstance(v, str):
        if _NAME.match(v):
            return v
        return _quote(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if hasattr(v, "__index__"):
        return str(v.__index__())
    if hasattr(v, "__float__"):
        return _fmt(float(v))
    return _bad_value(v)


def _bad_value(v):
    raise TypeError("devproc: a keyword's value is a number, a list of numbers or a "
                    "string (a .dp has no %r)" % (v,))


def _quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace(
        "\n", "\\n").replace("\t", "\\t") + '"'


def _is_exported_program(p):
    t = type(p)
    return t.__name__ == "ExportedProgram" and t.__module__.split(".")[0] == "torch"


def _pt2_outputs(path):
    """The user outputs a .pt2 archive's model returns, or 1 when it cannot be
    read (the build then reports what is wrong with it)."""
    try:
        with zipfile.ZipFile(path) as z:
            name = [n for n in z.namelist() if n.endswith("models/model.json")]
            spec = json.loads(z.read(name[0]))["graph_module"]["signature"]["output_specs"]
        return max(1, sum(1 for s in spec if "user_output" in s))
    except Exception:
        return 1


def _same_zip(x, y):
    for n in x.namelist():
        if n.endswith("serialization_id"):
            continue
        a, b = x.read(n), y.read(n)
        if a == b:
            continue
        if not (a[:4] == b[:4] == b"PK\x03\x04"):
            return False
        # a torch.save archive inside (the sample inputs): its own id
        with zipfile.ZipFile(io.BytesIO(a)) as p, zipfile.ZipFile(io.BytesIO(b)) as q:
            if p.namelist() != q.namelist() or not _same_zip(p, q):
                return False
    return True


def _same_archive(a, b):
    """Whether two .pt2 files hold the same members with the same bytes, but
    for the serialization ids torch.export.save (and the torch.save of the
    sample inputs inside) draw afresh each time."""
    try:
        with zipfile.ZipFile(a) as x, zipfile.ZipFile(b) as y:
            return x.namelist() == y.namelist() and _same_zip(x, y)
    except Exception:
        return False


def _write_if_changed(path, data):
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except OSError:
        pass
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return True


def find_devproc(devproc=None):
    """The devproc executable: the argument, $DEVPROC, $DEVPROC_ROOT/bin/devproc,
    the checkout this package sits in (python/devproc/ -> bin/devproc), or
    devproc on PATH."""
    cands = [devproc, os.environ.get("DEVPROC")]
    if os.environ.get("DEVPROC_ROOT"):
        cands.append(os.path.join(os.environ["DEVPROC_ROOT"], "bin", "devproc"))
    cands.append(os.path.join(os.path.dirname(os.path.dirname(_HERE)), "bin", "devproc"))
    cands.append(shutil.which("devproc"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise BuildError("devproc: cannot find the devproc executable: pass devproc=, set "
                     "DEVPROC=/path/to/bin/devproc, or put it on PATH")


_ERR = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<stage>[\w.-]+): ")
_ERR_BIN = re.compile(r"^(?P<file>[^\s:][^:]*): (?P<stage>import|verify|place|partition|"
                      r"lower_cpu|lower_gpu|link|devproc|legalize): ")


class Pipeline:
    """A pipeline being written; make one with devproc.pipeline(name)."""

    def __init__(self, name):
        self.name = name
        self._stmts = []
        self._inputs = []
        self._outputs = []      # (Value, source)
        self._count = {}
        self._models = []       # {"program": ExportedProgram, or "path": .pt2; "dp": as written}
        self._path = None       # where save() wrote the .dp
        self._lines = {}        # .dp line -> Python source, from the last save()

    def __repr__(self):
        return "<devproc.Pipeline %s: %d statements>" % (self.name, len(self._stmts))

    # ---- statements

    def input(self, name, dtype, shape):
        """input NAME: DTYPE[shape]: a graph input.  shape: a tuple of sizes,
        or (None, None, C) ("?" in the .dp) for an image of any size, or
        (None,) with dtype "u8" for text (UTF-8 of any length)."""
        v = Value(self, name, True)
        if isinstance(shape, int):
            shape = (shape,)
        dims = ",".join("?" if d is None or d == "?" else str(d) for d in shape)
        self._inputs.append(v)
        self._stmts.append(_Stmt(lambda: "input %s: %s[%s]" % (v.name, dtype, dims), [v], _source()))
        return v

    def _operand(self, x, what):
        if not isinstance(x, Value):
            raise TypeError("devproc: %s: an operand is a Value of this pipeline "
                            "(from input() or an op), not %r" % (what, x))
        if x._pipe is not self:
            raise TypeError("devproc: %s: %s is a value of pipeline %s, not of %s"
                            % (what, x.name, x._pipe.name, self.name))
        return x

    def _results(self, base, n, names):
        k = self._count[base] = self._count.get(base, 0) + 1
        if n == 1:
            return [Value(self, "%s%d" % (base, k), False)]
        return [Value(self, "%s%d_%s" % (base, k, names[i] if i < len(names) else i), False)
                for i in range(n)]

    def op(self, opname, *args, **kw):
        """Any op of the pipeline language by name, with positional operands
        and keyword attributes; what the methods named after the ops call."""
        ins = [self._operand(x, opname) for x in args]
        order = OPS[opname][0] if opname in OPS else ()
        keys = sorted(kw, key=lambda k: order.index(k) if k in order else len(order))
        kws = [(k, _fmt(kw[k])) for k in keys]   # in the .dp's order; unknown ones last
        n = OPS[opname][1] if opname in OPS else 1
        outs = self._results(opname, n, ("values", "indices") if opname == "topk" else ())

        def text():
            a = [x.name for x in ins] + ["%s=%s" % kv for kv in kws]
            return "%s = %s(%s)" % (", ".join(o.name for o in outs), opname, ", ".join(a))
        self._stmts.append(_Stmt(text, outs, _source()))
        return outs[0] if n == 1 else tuple(outs)

    def model(self, program, *args, file=None):
        """model("file.pt2", args...): a torch.export archive's path (relative
        to the current folder), or a torch.export.ExportedProgram, saved by
        save() beside the .dp as file (default NAME_modelK.pt2).  Returns its
        output, or a tuple when the model has several."""
        ins = [self._operand(x, "model") for x in args]
        if _is_exported_program(program):
            nout = max(1, len(program.graph_signature.user_outputs))
            k = sum(1 for m in self._models if m["program"] is not None) + 1
            entry = {"program": program, "path": None,
                     "dp": file or "%s_model%d.pt2" % (self.name, k)}
        elif isinstance(program, (str, os.PathLike)):
            path = os.path.abspath(os.fspath(program))
            nout = _pt2_outputs(path)
            entry = {"program": None, "path": path, "dp": None}
        else:
            raise TypeError("devproc: model: a .pt2 path or a torch.export.ExportedProgram, "
                            "not %r" % (program,))
        self._models.append(entry)
        outs = self._results("model", nout, ())

        def text():
            a = [_quote(entry["dp"])] + [x.name for x in ins]
            return "%s = model(%s)" % (", ".join(o.name for o in outs), ", ".join(a))
        self._stmts.append(_Stmt(text, outs, _source()))
        return outs[0] if nout == 1 else tuple(outs)

    def output(self, name, value=None):
        """output NAME: value becomes a graph output called name (output(v)
        keeps v's name).  A value is named as its output."""
        if value is None:
            name, value = None, name
        self._operand(value, "output")
        if name is not None:
            if value._fixed and name != value.name:
                raise ValueError("devproc: output %r: the value is already named %r, and "
                                 "an output is named as its value: output it as %r"
                                 % (name, value.name, value.name))
            value.name = name   # now chosen: kept as it is
        self._outputs.append((value, _source()))
        return value

    # ---- writing and building

    def text(self, dpdir="."):
        """The .dp file's text (models' paths relative to dpdir)."""
        self._name_values()
        for m in self._models:
            if m["path"] is not None:   # as the .dp names it: relative to its folder
                m["dp"] = os.path.relpath(m["path"], os.path.abspath(dpdir)).replace(os.sep, "/")
        lines = ["# %s.dp: written by devproc's Python front end (python/devproc);" % self.name,
                 "# regenerate it from its Python source rather than edit it.",
                 "pipeline %s" % self.name, ""]
        self._lines = {}
        prev_input = True
        for s in self._stmts:
            t = s.text_fn()
            is_input = t.startswith("input ")
            if prev_input and not is_input:
                lines.append("")
            prev_input = is_input
            lines.append(t)
            self._lines[len(lines)] = s.source
        lines.append("")
        for v, src in self._outputs:
            lines.append("output %s" % v.name)
            self._lines[len(lines)] = src
        return "\n".join(lines) + "\n"

    def _name_values(self):
        """Gives each op result that has no chosen name one unused by any
        chosen name."""
        taken = set()
        for s in self._stmts:
            taken.update(v._name for v in s.outs if v._fixed)
        for s in self._stmts:
            for v in s.outs:
                if v._fixed:
                    continue
                base, k = v._name, 1
                while v._name in taken:
                    k += 1
                    v._name = "%s_%d" % (base, k)
                taken.add(v._name)

    def save(self, path):
        """Writes the .dp file (only when its bytes change) and the models
        given as ExportedPrograms beside it; returns path."""
        dpdir = os.path.dirname(os.path.abspath(path))
        os.makedirs(dpdir, exist_ok=True)
        for m in self._models:
            if m["program"] is not None:
                self._save_program(m["program"], os.path.join(dpdir, m["dp"]))
        _write_if_changed(path, self.text(dpdir).encode())
        self._path = path
        return path

    @staticmethod
    def _save_program(program, dest):
        import torch    # only here: a pipeline of .pt2 paths needs no torch
        tmp = "%s.tmp%d.pt2" % (dest, os.getpid())
        torch.export.save(program, tmp)
        if os.path.exists(dest) and _same_archive(tmp, dest):
            os.remove(tmp)   # the same program: dest keeps its bytes and mtime
        else:
            os.replace(tmp, dest)

    def _error(self, out, path):
        for ln in out.splitlines():
            m = _ERR.match(ln)
            if m:
                src = None
                if os.path.basename(m.group("file")) == os.path.basename(path):
                    src = self._lines.get(int(m.group("line")))
                return BuildError(ln, out, m.group("file"), int(m.group("line")),
                                  int(m.group("col")), m.group("stage"), src)
            m = _ERR_BIN.match(ln)
            if m:
                return BuildError(ln, out, m.group("file"), stage=m.group("stage"))
        lines = [ln for ln in out.splitlines() if ln.strip()]
        return BuildError(lines[-1] if lines else "devproc failed", out)

    def _saved(self, builddir):
        if self._path is None:
            self.save(os.path.join(builddir, self.name + ".dp"))
        return self._path

    def check(self, devproc=None):
        """Runs import alone on the saved .dp (saving it into the current
        folder first if never saved): raises BuildError on any error in
        names, dtypes, shapes, keywords or model arguments."""
        exe = find_devproc(devproc)
        path = self._saved(".")
        imp = os.path.join(os.path.dirname(exe), "dp-import")
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([imp, path, "-o", os.path.join(d, "x.dpir"), "-w",
                                os.path.join(d, "w.bin")], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode:
            raise self._error(r.stdout, path)

    def build(self, target="cpu", builddir="build", jobs=None, devproc=None):
        """devproc build of the saved .dp (saved as BUILDDIR/NAME.dp if never
        saved) for target (a name under targets/ or a mapping file) into
        builddir; raises BuildError carrying the failing stage's error.
        Returns a Build with the paths of the executable, library and header."""
        exe = find_devproc(devproc)
        path = self._saved(builddir)
        cmd = [exe, "build", path, "--target", target, "-C", builddir]
        if jobs:
            cmd += ["-j", str(jobs)]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if r.returncode:
            raise self._error(r.stdout, path)
        return Build(builddir, self.name, r.stdout)


class Build:
    """What build() made: dir (BUILDDIR/NAME), executable, library, header,
    and output (what devproc and ninja printed)."""

    def __init__(self, builddir, name, output):
        self.dir = os.path.join(builddir, name)
        self.executable = os.path.join(self.dir, name)
        self.library = os.path.join(self.dir, "lib%s.a" % name)
        self.header = os.path.join(self.dir, "%s.h" % name)
        self.output = output

    def __repr__(self):
        return "<devproc.Build %s>" % self.executable


def _make_method(opname, keywords, nres):
    def method(self, x, **kw):
        return self.op(opname, x, **kw)
    sig = ", ".join("%s=..." % k for k in keywords)
    method.__name__ = opname
    method.__doc__ = ("%s(x%s) of the pipeline language (formats/dp.md): %s; keywords "
                      "left out take the .dp's defaults.  Returns %s."
                      % (opname, ", " + sig if sig else "", ", ".join(keywords),
                         "a Value" if nres == 1 else "a tuple of %d Values" % nres))
    return method


for _op, (_kw, _n) in OPS.items():
    setattr(Pipeline, _op, _make_method(_op, _kw, _n))


def pipeline(name):
    """A new, empty pipeline called name (a C identifier: it prefixes the
    generated C API, NAME_create...)."""
    return Pipeline(name)
