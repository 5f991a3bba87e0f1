"""ResNet-50 as torchvision builds it (torchvision.models.resnet50: Bottleneck blocks, BatchNorm,
ReLU(inplace=True), `out += identity`), trained with cross-entropy on ImageNet-shaped inputs.
Needs torchvision (Debian: python3-torchvision); `available()` says whether it imports.
"""

import torch
import torch.nn as nn


def available():
    try:
        import torchvision  # noqa: F401
    except ImportError:
        return False
    return True


class Classifier(nn.Module):
    """The torchvision model and its loss, so that the captured step ends in a scalar."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, images, labels):
        return nn.functional.cross_entropy(self.net(images), labels)


def config(name="resnet50", **overrides):
    c = {"arch": name, "num_classes": 1000, "image_size": 224}
    c.update(overrides)
    return c


def model(c):
    import torchvision
    return Classifier(getattr(torchvision.models, c["arch"])(num_classes=c["num_classes"]))


def inputs(c, batch):
    return (torch.randn(batch, 3, c["image_size"], c["image_size"]),
            torch.randint(0, c["num_classes"], (batch,)))
