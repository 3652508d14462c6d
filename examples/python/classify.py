"""classify.py: examples/classify/classify.dp written in Python.

    PYTHONPATH=python python3 examples/python/classify.py [OUT.dp] [--build BUILDDIR]

writes OUT.dp (default classify.dp, here) naming examples/classify/mlp.pt2,
and with --build compiles it with devproc build.  The program it builds is
examples/classify/classify.dp's: the same label for the same image.
"""
import os
import sys

import devproc

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
builddir = None
if "--build" in args:
    i = args.index("--build")
    builddir = args[i + 1]
    del args[i:i + 2]
out = args[0] if args else "classify.dp"

pipe = devproc.pipeline("classify")
image = pipe.input("image", "u8", (1, 32, 32, 3))
x = pipe.normalize(image, scale=1 / 255, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
chw = pipe.permute(x, dims=[0, 3, 1, 2])
flat = pipe.flatten(chw, start=1)
logits = pipe.model(os.path.join(here, "..", "classify", "mlp.pt2"), flat)
label = pipe.argmax(logits, dim=1)
pipe.output("label", label)
pipe.output("logits", logits)
pipe.save(out)
print("wrote", out)

if builddir:
    try:
        b = pipe.build(target="cpu", builddir=builddir)
    except devproc.BuildError as e:
        sys.exit(str(e))
    print("built", b.executable)
