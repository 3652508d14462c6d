#!/usr/bin/env python3
"""Makes the ResNet-18 fixtures and the imagenet example's references.

Run on a machine with PyTorch 2.11 and torchvision (the GPU machine):
    python3 tools/export_resnet.py OUT_DIR [--full]

Writes to OUT_DIR:
  resnet18_narrow.pt2       torchvision's ResNet-18 (BasicBlock, [2, 2, 2, 2])
                            at a quarter of the width (16-32-64-128 channels,
                            2.9 MB of weights), random weights and random
                            batch-norm statistics, eval mode, input
                            f32[1,3,224,224]: the default (training) IR
  resnet18_narrow_core.pt2  the same after run_decompositions() (Core ATen)
  resnet18.pt2              (--full only) the real ResNet-18, random weights
                            (46 MB, not committed: made where it is measured)
  photo.png, photo.jpg      a synthetic 500x375 RGB photograph (the jpg at
                            quality 90)
  labels.txt                the 1000 ImageNet class names, in index order
                            (torchvision's ResNet18_Weights metadata)
  imagenet_ref.npz          photo_png: the png's pixels (u8 HWC);
                            photo_jpg: PIL's decoding of the jpg (u8 HWC);
                            pre_pil: torchvision's eval transform of the png
                            through PIL (Resize(256), CenterCrop(224),
                            ToTensor, Normalize), f32[1,3,224,224];
                            crop_pil: the u8 HWC crop before ToTensor;
                            pre_tensor: the same transform on the u8 tensor
                            (antialiased bilinear in torch);
                            narrow_probs, narrow_top5: softmax and top-5 of
                            the narrow model on pre_pil, on the CPU in fp32;
                            full_probs, full_top5 likewise (--full only)
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision
from PIL import Image
from torchvision import transforms
from torchvision.models.resnet import BasicBlock, ResNet


class NarrowResNet(ResNet):
    """torchvision's ResNet with the stage widths given (its constructor
    fixes 64-128-256-512); the blocks and _make_layer are torchvision's."""

    def __init__(self, widths, layers=(2, 2, 2, 2), num_classes=1000):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = widths[0]
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, widths[0], kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, widths[0], layers[0])
        self.layer2 = self._make_layer(BasicBlock, widths[1], layers[1], stride=2)
        self.layer3 = self._make_layer(BasicBlock, widths[2], layers[2], stride=2)
        self.layer4 = self._make_layer(BasicBlock, widths[3], layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[3], num_classes)


def randomize(model, seed):
    """Random batch-norm statistics and affine parameters, so that the
    normalization is not the identity; the rest keeps torchvision's init."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    # a wider spread of logits than the default init, so that the top-5
    # are well separated (the example prints them)
    m = model.fc
    m.weight.data.copy_(torch.randn(m.weight.shape, generator=g) * (4.0 / m.in_features ** 0.5))
    return model.eval()


def photo():
    """A 500x375 synthetic photograph: smooth gradients, discs and stripes,
    a little noise; the same for a seed."""
    rng = np.random.default_rng(7)
    h, w = 375, 500
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.zeros((h, w, 3), np.float32)
    img[..., 0] = 120 + 80 * np.sin(x / 37.0) * np.cos(y / 53.0)
    img[..., 1] = 90 + 60 * (x / w) + 40 * np.sin((x + y) / 23.0)
    img[..., 2] = 140 - 70 * (y / h) + 30 * np.cos(x / 11.0)
    for cx, cy, r, col in ((160, 170, 70, (230, 200, 40)), (340, 120, 50, (30, 60, 200)),
                           (390, 280, 60, (200, 40, 60))):
        d = (x - cx) ** 2 + (y - cy) ** 2 < r * r
        img[d] = col
    img += rng.normal(0, 6, img.shape)
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


def top5(logits):
    p = torch.softmax(logits, dim=1)
    s, i = torch.topk(p, 5, dim=1)
    return p.numpy(), i.numpy().astype(np.int64), s


def main():
    out = sys.argv[1]
    full = "--full" in sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(1, 3, 224, 224)

    narrow = randomize(NarrowResNet((16, 32, 64, 128)), 1)
    ep = torch.export.export(narrow, (x,))
    torch.export.save(ep, os.path.join(out, "resnet18_narrow.pt2"))
    core = ep.run_decompositions()
    torch.export.save(core, os.path.join(out, "resnet18_narrow_core.pt2"))
    ops = sorted({str(n.target) for n in core.graph.nodes if n.op == "call_function"})
    print("narrow core ops:", ops)

    arr = photo()
    Image.fromarray(arr).save(os.path.join(out, "photo.png"))
    Image.fromarray(arr).save(os.path.join(out, "photo.jpg"), quality=90)
    jpg = np.asarray(Image.open(os.path.join(out, "photo.jpg")).convert("RGB"))

    labels = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    with open(os.path.join(out, "labels.txt"), "w") as f:
        for c in labels:
            f.write(c + "\n")

    norm = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    crop = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    img = Image.open(os.path.join(out, "photo.png")).convert("RGB")
    crop_pil = np.asarray(crop(img))
    pre_pil = norm(transforms.ToTensor()(crop(img))).unsqueeze(0)
    t = torch.from_numpy(arr).permute(2, 0, 1)
    tcrop = transforms.CenterCrop(224)(transforms.Resize(256, antialias=True)(t))
    pre_tensor = norm(tcrop.float() / 255).unsqueeze(0)
    print("pre_pil vs pre_tensor max|d| =", float((pre_pil - pre_tensor).abs().max()))

    ref = dict(photo_png=arr, photo_jpg=jpg, crop_pil=crop_pil, pre_pil=pre_pil.numpy(),
               pre_tensor=pre_tensor.numpy())
    with torch.no_grad():
        y = narrow(pre_pil)
        yc = core.module()(pre_pil)
    print("narrow: max|core - training| =", float((y - yc).abs().max()))
    ref["narrow_probs"], ref["narrow_top5"], s = top5(y)
    print("narrow top5", ref["narrow_top5"][0], s.numpy()[0],
          [labels[i] for i in ref["narrow_top5"][0]])
    if full:
        torch.manual_seed(0)
        m = randomize(torchvision.models.resnet18(), 1)
        torch.export.save(torch.export.export(m, (x,)), os.path.join(out, "resnet18.pt2"))
        with torch.no_grad():
            y = m(pre_pil)
        ref["full_probs"], ref["full_top5"], s = top5(y)
        print("full top5", ref["full_top5"][0], s.numpy()[0],
              [labels[i] for i in ref["full_top5"][0]])
    np.savez(os.path.join(out, "imagenet_ref.npz"), **ref)   # stored: tests unpack it with npzx.c
    print("torch", torch.__version__, "torchvision", torchvision.__version__)


if __name__ == "__main__":
    main()
