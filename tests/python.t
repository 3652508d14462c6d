#!/bin/sh
# python.t: the Python front end, python/devproc (TAP).  It imports with
# PYTHONPATH=python where torch and numpy cannot be imported, and pip
# installs it with no index; examples/python/classify.py saves a .dp that
# builds into the program examples/classify/classify.dp builds (the same IR
# but for the dep lines, the same label and logits, PyTorch's label); save
# is deterministic and writes only on change; every op of formats/dp.md's
# table is a method with the table's keywords; errors in names, dtypes,
# shapes and keywords are import's own text for the equivalent .dp, with
# the Python line that made the statement.  Where torch imports (the GPU
# machine), an ExportedProgram passed to model() is saved beside the .dp
# and the program built from it equals PyTorch's outputs; elsewhere that
# test says # SKIP.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
dp=$root/bin/devproc
. tests/tap.sh   # $tmp, n, fails, check, skip

py=$(command -v python3) || { echo "1..0 # SKIP no python3"; exit 0; }
export PYTHONPATH=$root/python DEVPROC=$dp
# torch and numpy blocked: the front end must not need them
noext="import sys; sys.modules['torch'] = None; sys.modules['numpy'] = None"

imports() { "$py" -c "$noext
import devproc
assert 'torch' not in sys.modules or sys.modules['torch'] is None
p = devproc.pipeline('x'); print(p)"; }
check "import devproc with PYTHONPATH=python, torch and numpy unimportable" imports

pipinstall() {
	"$py" -m pip --version >/dev/null 2>&1 || { echo "no pip"; return 2; }
	cp -r python "$tmp/pysrc" &&
		"$py" -m pip install --no-index --no-cache-dir --target "$tmp/site" "$tmp/pysrc" >"$tmp/pip.log" 2>&1 ||
		{ cat "$tmp/pip.log"; return 1; }
	(cd "$tmp" && PYTHONPATH=$tmp/site "$py" -c "import devproc, os
assert os.path.dirname(devproc.__file__) == os.path.join('$tmp/site', 'devproc'), devproc.__file__
devproc.pipeline('y')")
}
if "$py" -m pip --version >/dev/null 2>&1; then
	check "pip install ./python with no package index (a standard-library build backend)" pipinstall
else
	skip "no pip for python3"
fi

# ---- the classify pipeline written in Python

mkdir -p "$tmp/py"
classify_py() {
	"$py" -c "$noext
import runpy; runpy.run_path('examples/python/classify.py', run_name='__main__')" \
		"$tmp/py/classify.dp" --build "$tmp/py/b" || return 1
	"$dp" build examples/classify/classify.dp -C "$tmp/ref" >/dev/null || return 1
	"$tmp/py/b/classify/classify" --in image=examples/classify/image.npy \
		--out label="$tmp/pl.npy" --out logits="$tmp/pg.npy" || return 1
	"$tmp/ref/classify/classify" --in image=examples/classify/image.npy \
		--out label="$tmp/rl.npy" --out logits="$tmp/rg.npy" || return 1
	bin/npycmp --exact "$tmp/pl.npy" "$tmp/rl.npy" &&
		bin/npycmp --exact "$tmp/pl.npy" tests/data/classify/label.npy &&
		bin/npycmp --exact "$tmp/pg.npy" "$tmp/rg.npy"
}
check "classify.py's .dp builds; its label equals classify.dp's and PyTorch's, its logits classify.dp's" classify_py

same_ir() {
	for d in py/b ref; do
		"$dp" dump "$tmp/$d/classify/1.import.dpir" | grep -v '^dep ' >"$tmp/$(basename $d).ir" || return 1
	done
	diff "$tmp/b.ir" "$tmp/ref.ir"
}
check "classify.py's .dp imports to classify.dp's IR (but for the files' names and hashes)" same_ir

readable() {
	cat "$tmp/py/classify.dp"
	grep -qx 'pipeline classify' "$tmp/py/classify.dp" &&
		grep -qx 'input image: u8\[1,32,32,3\]' "$tmp/py/classify.dp" &&
		grep -qx 'label = argmax(logits, dim=1)' "$tmp/py/classify.dp" &&
		grep -Eqx 'logits = model\("[./]*examples/classify/mlp.pt2", flatten1\)|logits = model\("(\.\./)+.*/examples/classify/mlp.pt2", flatten1\)' "$tmp/py/classify.dp" &&
		grep -q 'scale=0.00392156862745098, mean=\[0.485, 0.456, 0.406\], std=\[0.229, 0.224, 0.225\])$' "$tmp/py/classify.dp" &&
		[ "$(tail -2 "$tmp/py/classify.dp")" = "$(printf 'output label\noutput logits')" ]
}
check "the saved .dp reads as a hand-written one: one statement a line, keywords as given, outputs in order" readable

deterministic() {
	cp "$tmp/py/classify.dp" "$tmp/first.dp"
	t0=$(stat -c %Y.%y "$tmp/py/classify.dp")
	sleep 1
	"$py" examples/python/classify.py "$tmp/py/classify.dp" >/dev/null || return 1
	cmp "$tmp/first.dp" "$tmp/py/classify.dp" &&
		[ "$(stat -c %Y.%y "$tmp/py/classify.dp")" = "$t0" ] || { echo "rewritten"; return 1; }
	out=$(ninja -C "$tmp/py/b" 2>&1) && echo "$out" | grep -q 'no work to do'
}
check "saving again writes the same bytes, leaves the file's mtime, and ninja has no work" deterministic

ops_table() {
	"$py" - <<'EOF'
import re, devproc
rows, inop = [], False      # the rows of the op table (| op | operands | ...)
for l in open("formats/dp.md"):
    if l.startswith("| op | operands"):
        inop = True
    elif not l.startswith("|"):
        inop = False
    elif inop and l.startswith("| `") and "model(" not in l:
        rows.append(l)
seen = {}
for r in rows:
    cols = [c.strip() for c in r.strip().strip("|").split("|")]
    op = re.search(r"(\w+)\(", cols[0]).group(1)
    items, depth, cur = [], 0, ""
    for ch in cols[2]:          # the attributes: comma-separated outside ( )
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    kws = tuple(re.search(r"`(\w+)`", i).group(1) for i in items if "`" in i)
    seen[op] = kws
assert seen, "no op rows in formats/dp.md"
for op, kws in seen.items():
    assert op in devproc.OPS, "no method for %s" % op
    assert devproc.OPS[op][0] == kws, (op, devproc.OPS[op][0], kws)
    assert callable(getattr(devproc.Pipeline, op)), op
assert set(seen) == set(devproc.OPS), set(devproc.OPS) ^ set(seen)
print(len(seen), "ops")
EOF
}
check "every op of formats/dp.md's table is a method, with the table's keywords in its order" ops_table

every_op() {
	cp examples/classify/mlp.pt2 "$tmp/py/"
	"$py" - "$tmp/py" <<'EOF'
import sys, os, devproc
d = sys.argv[1]
p = devproc.pipeline("every")
img = p.input("photo", "u8", (None, None, 3))
r = p.resize(img, size=40, crop=36)
c = p.center_crop(r, size=32)
b = p.reshape(c, shape=[1, 32, 32, 3])
f = p.cast(b, dtype="f32")
n = p.normalize(f, scale=1.0, mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25], axis=-1)
t = p.permute(n, dims=[0, 3, 1, 2])
fl = p.flatten(t, start=1, end=-1)
lg = p.model(os.path.join(d, "mlp.pt2"), fl)
s = p.softmax(lg, dim=1)
v, i = p.topk(s, k=3, dim=1)
a = p.argmax(lg, dim=1, keepdim=True)
for x in (v, i, a):
    p.output(x)
p.save(os.path.join(d, "every.dp"))
p.check()
print(open(os.path.join(d, "every.dp")).read())
EOF
}
check "every pipeline op from Python: an image pipeline with each op and keyword imports cleanly" every_op

# errors: the message of import for the Python pipeline equals the one for
# the same pipeline written by hand (after file:line:col), and the error
# names the Python line
err() { # HAND-WRITTEN-DP PYTHON-STATEMENTS
	printf '%b' "$1" >"$tmp/py/hand.dp"
	want=$(cd "$tmp/py" && "$root/bin/dp-import" hand.dp -o h.dpir -w h.bin 2>&1 | head -1 |
		sed 's/^hand.dp:[0-9]*:[0-9]*: //')
	[ -n "$want" ] || { echo "the hand-written .dp imports"; return 1; }
	printf 'import devproc, os, sys\nos.chdir(sys.argv[1])\np = devproc.pipeline("bad")\n%b\np.save("bad.dp")\ntry:\n    p.check()\nexcept devproc.BuildError as e:\n    print(e.message)\n    print(e.source)\n    print(e.stage, e.line is not None)\nelse:\n    print("no error")\n' "$2" >"$tmp/py/bad.py"
	"$py" "$tmp/py/bad.py" "$tmp/py" >"$tmp/got" 2>&1 || { cat "$tmp/got"; return 1; }
	got=$(head -1 "$tmp/got" | sed 's/^bad.dp:[0-9]*:[0-9]*: //')
	# positions inside the message ("first defined at 1:7") are the files'
	got=$(echo "$got" | sed 's/[0-9][0-9]*:[0-9][0-9]*/L:C/g')
	want=$(echo "$want" | sed 's/[0-9][0-9]*:[0-9][0-9]*/L:C/g')
	[ "$got" = "$want" ] || { echo "python: $got"; echo "hand:   $want"; return 1; }
	src=$(sed -n 2p "$tmp/got")
	line=$(grep -n 'MARK' "$tmp/py/bad.py" | head -1 | cut -d: -f1)
	[ "$src" = "bad.py:$line" ] || { echo "source: $src, want bad.py:$line"; cat "$tmp/py/bad.py"; return 1; }
	[ "$(sed -n 3p "$tmp/got")" = "import True" ]
}
check "error: an unknown dtype" err \
	'input x: u9[1]\noutput x\n' \
	'x = p.input("x", "u9", (1,))  # MARK\np.output(x)'
check "error: a size of 0" err \
	'input x: u8[0]\noutput x\n' \
	'x = p.input("x", "u8", (0,))  # MARK\np.output(x)'
check "error: a rank over 8" err \
	'input x: u8[1,1,1,1,1,1,1,1,1]\noutput x\n' \
	'x = p.input("x", "u8", (1,) * 9)  # MARK\np.output(x)'
check "error: a name defined twice" err \
	'input x: u8[1]\ninput x: u8[2]\noutput x\n' \
	'x = p.input("x", "u8", (1,))\ny = p.input("x", "u8", (2,))  # MARK\np.output(x)'
check "error: a bad input name" err \
	'input 9x: u8[1]\noutput 9x\n' \
	'x = p.input("9x", "u8", (1,))  # MARK\np.output(x)'
check "error: an unknown keyword, with the suggestion" err \
	'input x: f32[1,4]\ny = argmax(x, dims=1)\noutput y\n' \
	'x = p.input("x", "f32", (1, 4))\ny = p.argmax(x, dims=1)  # MARK\np.output("y", y)'
check "error: an unknown op, with the suggestion" err \
	'input x: f32[1,4]\ny = normalise(x)\noutput y\n' \
	'x = p.input("x", "f32", (1, 4))\ny = p.op("normalise", x)  # MARK\np.output("y", y)'
check "error: permute dims of the wrong length" err \
	'input x: f32[1,4]\ny = permute(x, dims=[0])\noutput y\n' \
	'x = p.input("x", "f32", (1, 4))\ny = p.permute(x, dims=[0])  # MARK\np.output("y", y)'
check "error: a model argument of the wrong dtype" err \
	'input image: u8[1,3072]\nlogits = model("mlp.pt2", image)\noutput logits\n' \
	'x = p.input("image", "u8", (1, 3072))\ny = p.model("mlp.pt2", x)  # MARK\np.output("logits", y)'

build_error() {
	"$py" - "$tmp/py" <<'EOF'
import os, sys, devproc
os.chdir(sys.argv[1])
p = devproc.pipeline("bad")
x = p.input("x", "f32", (1, 4))
p.output("y", p.softmax(x, dim=5))
p.save("bad2.dp")
try:
    p.build(builddir="bb")
except devproc.BuildError as e:
    line = open("bad2.dp").read().split("\n")[e.line - 1]
    assert e.stage == "import" and line == "y = softmax(x, dim=5)" and e.file.endswith("bad2.dp"), \
        (e.message, line)
    assert "softmax" in e.message and e.source.endswith(":5"), (e.message, e.source)
    assert "FAILED" in e.output or "import" in e.output
    print(e)
else:
    sys.exit("built")
EOF
}
check "build() raises BuildError carrying the failing stage's error line and the Python line" build_error

python_errors() {
	"$py" - <<'EOF'
import devproc
p, q = devproc.pipeline("a"), devproc.pipeline("b")
x = p.input("x", "f32", (1, 4))
y = q.input("y", "f32", (1, 4))
for f, want in ((lambda: p.softmax(3, dim=1), "an operand is a Value"),
                (lambda: p.softmax(y, dim=1), "y is a value of pipeline b, not of a"),
                (lambda: p.output("z", x), "the value is already named 'x'"),
                (lambda: p.softmax(x, dim={}), "a keyword's value is"),
                (lambda: p.model(3, x), "a .pt2 path or a torch.export.ExportedProgram")):
    try:
        f()
    except (TypeError, ValueError) as e:
        assert want in str(e), (str(e), want)
    else:
        raise SystemExit("no error for " + want)
EOF
}
check "Python-side errors: a non-Value operand, another pipeline's value, renaming a named value, a bad keyword value" python_errors

names() {
	"$py" - "$tmp/py" <<'EOF'
import os, sys, devproc
os.chdir(sys.argv[1])
p = devproc.pipeline("names")
x = p.input("x", "f32", 4)
a, b, c = p.softmax(x, dim=0), p.softmax(x, dim=0), p.softmax(x, dim=0)
b.name = "softmax1"          # a chosen name wins over an op's own
p.output(a)
p.output(b)
p.output("probs", c)
text = p.text()
assert "softmax1_2 = softmax(x, dim=0)\nsoftmax1 = softmax(x, dim=0)\nprobs = softmax(x, dim=0)\n" in text, text
assert text.endswith("output softmax1_2\noutput softmax1\noutput probs\n"), text
p.save("names.dp")
p.check()
EOF
}
check "value names: an op's own name gives way to a chosen one; outputs follow the values' names" names

multi() {
	"$py" - "$tmp/py" <<'EOF'
import json, os, sys, zipfile, devproc
os.chdir(sys.argv[1])
# an archive whose signature has two user outputs (and a buffer mutation)
spec = [{"user_output": {"arg": {"as_tensor": {"name": "a"}}}},
        {"buffer_mutation": {"arg": {"name": "b"}, "buffer_name": "c"}},
        {"user_output": {"arg": {"as_tensor": {"name": "d"}}}}]
with zipfile.ZipFile("two.pt2", "w") as z:
    z.writestr("two/models/model.json", json.dumps({"graph_module": {"signature": {"output_specs": spec}}}))
p = devproc.pipeline("multi")
x = p.input("x", "f32", (1, 4))
r = p.model("two.pt2", x)
assert isinstance(r, tuple) and len(r) == 2, r
v, i = p.topk(x, k=2, dim=1)
for o in r + (v, i):
    p.output(o)
t = p.text()
assert 'model1_0, model1_1 = model("two.pt2", x)' in t and "topk1_values, topk1_indices = topk(x, k=2, dim=1)" in t, t
EOF
}
check "a model of two outputs and topk return tuples, named NAME_0, NAME_1 and values, indices" multi

same_archive() {
	"$py" - "$tmp/py" <<'EOF'
import io, os, sys, zipfile, devproc
os.chdir(sys.argv[1])
def inner(sid, data=b"x"):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("archive/data.pkl", data)
        z.writestr("archive/.data/serialization_id", sid)
    return b.getvalue()
def pt2(path, sid, isid, data=b"x", model=b"{}"):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("m/models/model.json", model)
        z.writestr("m/data/sample_inputs/model.pt", inner(isid, data))
        z.writestr("m/.data/serialization_id", sid)
pt2("a.pt2", "1", "2")
pt2("b.pt2", "3", "4")
pt2("c.pt2", "1", "2", data=b"y")
pt2("d.pt2", "1", "2", model=b"{ }")
assert devproc._same_archive("a.pt2", "b.pt2")
assert not devproc._same_archive("a.pt2", "c.pt2")
assert not devproc._same_archive("a.pt2", "d.pt2")
assert not devproc._same_archive("a.pt2", "missing.pt2")
EOF
}
check "two saves of one program are the same archive but for their serialization ids (the inner torch.save's too)" same_archive

# ---- an ExportedProgram (torch: the GPU machine)

exported() {
	mkdir -p "$tmp/ep"
	cat >"$tmp/ep/export.py" <<'EOF'
import os, struct, sys
import torch, devproc
d = sys.argv[1]
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(12, 8), torch.nn.ReLU(), torch.nn.Linear(8, 5)).eval()
x = torch.randn(1, 12)
ep = torch.export.export(m, (x,))
p = devproc.pipeline("tiny")
inp = p.input("x", "f32", (1, 12))
logits = p.model(ep, inp)
p.output("probs", p.softmax(logits, dim=1))
p.output("label", p.argmax(logits, dim=1))
p.save(os.path.join(d, "tiny.dp"))
assert os.path.exists(os.path.join(d, "tiny_model1.pt2"))
ref = torch.softmax(m(x), dim=1).detach()
def raw(path, t, fmt):
    with open(path, "wb") as f:
        f.write(struct.pack("<%d%s" % (t.numel(), fmt), *t.flatten().tolist()))
raw(os.path.join(d, "x.bin"), x, "f")
raw(os.path.join(d, "probs.bin"), ref, "f")
raw(os.path.join(d, "label.bin"), ref.argmax(dim=1), "q")
b = p.build(builddir=os.path.join(d, "b"))
print(b.executable)
EOF
	e=$tmp/ep
	"$py" "$e/export.py" "$e" || return 1
	"$dp" tensor -o "$e/x.npy" --raw "$e/x.bin" --dtype f32 --shape 1,12 &&
		"$dp" tensor -o "$e/probs.npy" --raw "$e/probs.bin" --dtype f32 --shape 1,5 &&
		"$dp" tensor -o "$e/label.npy" --raw "$e/label.bin" --dtype i64 --shape 1 || return 1
	"$e/b/tiny/tiny" --in x="$e/x.npy" --out probs="$e/gp.npy" --out label="$e/gl.npy" || return 1
	bin/npycmp "$e/gp.npy" "$e/probs.npy" && bin/npycmp --exact "$e/gl.npy" "$e/label.npy"
}
resave() {
	# the same script again: torch draws new serialization ids, so the
	# archive may be rewritten (it is kept where nothing else differs), but
	# the model's IR keeps its bytes: the rebuild stops at import
	e=$tmp/ep
	[ -f "$e/tiny_model1.pt2" ] || return 1
	"$py" "$e/export.py" "$e" >/dev/null || return 1
	out=$(ninja -C "$e/b" 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -q 'no work to do' && return 0
	ran=$(echo "$out" | grep -c '^\[[0-9]*/[0-9]*\]')
	[ "$ran" -eq 1 ] && echo "$out" | grep -q '^\[1/[0-9]*\] import ' || { echo "$out"; return 1; }
}
if "$py" -c 'import torch' >/dev/null 2>&1; then
	check "model(ExportedProgram): saved beside the .dp and built; probs equal PyTorch's (1e-5), label equal" exported
	check "the export script run again: the rebuild runs import at most (the IR keeps its bytes)" resave
else
	skip "no torch (the GPU machine runs it)"
	skip "no torch (the GPU machine runs it)"
fi

echo "1..$n"
[ $fails -eq 0 ]
