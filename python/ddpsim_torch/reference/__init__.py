"""Reference models in plain PyTorch, written as their usual sources write them, for the aten
capture (ddpsim_torch.aten_capture) and its tests: gpt2 (Hugging Face GPT-2), llama (Hugging
Face Llama), bert (Hugging Face BERT encoder), resnet (torchvision ResNet-50). Each module has
CONFIGS (published shapes), config(name, **overrides), model(config) and inputs(config, ...).
They import torch at import time: import them only where torch is available.
"""
