#!/usr/bin/python3
"""Writes tests/golden/onnx_models/: models exported by PyTorch 1.13 (Debian's python3-torch)
with torch.onnx.export (opset 13, parameters as initializers named as PyTorch names them), and
for each an .npz of what PyTorch computed: the output for an input batch, the mean
cross-entropy loss for labels, its gradient with respect to every parameter, and the
parameters after one SGD step (lr 0.1). tests/python/test_onnx.py imports the models into Kiln
and checks its outputs, gradients and trained weights against these (no PyTorch needed there).

Usage: /usr/bin/python3 tests/golden/gen_onnx_models.py"""
import io
import os

import numpy as np
import torch
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_models")
LR = 0.1


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(20, 64), nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class Encoder(nn.Module):
    """One transformer encoder layer (multi-head attention, layer norm, GELU), then a classifier
    of the first token."""
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu",
                                                batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.layer(x)[:, 0])


class LstmLanguageModel(nn.Module):
    """Embedding, one LSTM layer, and a projection to the vocabulary at every position."""
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, 50)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.out(h[:, -1])


def write(name, model, x):
    model.eval()
    # No two parameters equal (the exporter would keep one initializer for both: layer norms'
    # ones and zeros).
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))
    buf = io.BytesIO()
    torch.onnx.export(model, (x,), buf, opset_version=13, input_names=["x"],
                      output_names=["logits"], do_constant_folding=False,
                      training=torch.onnx.TrainingMode.EVAL)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(buf.getvalue())
    labels = torch.arange(x.shape[0]) % 10
    out = model(x)
    loss = nn.functional.cross_entropy(out, labels)
    model.zero_grad()
    loss.backward()
    arrays = {"x": x.numpy(), "labels": labels.numpy(), "logits": out.detach().numpy(),
              "loss": np.array(loss.item(), np.float32)}
    for pname, p in model.named_parameters():
        arrays["grad:" + pname] = p.grad.numpy()
        arrays["sgd:" + pname] = (p - LR * p.grad).detach().numpy()
    np.savez(os.path.join(OUT, name + ".npz"), **arrays)
    print(name, "parameters:", len(list(model.parameters())), "loss:", loss.item())


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    write("mlp", Mlp(), torch.randn(8, 20))
    torch.manual_seed(1)
    write("lenet", LeNet(), torch.randn(4, 1, 28, 28))
    torch.manual_seed(2)
    write("encoder", Encoder(), torch.randn(4, 6, 32))
    torch.manual_seed(3)
    write("lstm_lm", LstmLanguageModel(), torch.randint(0, 50, (4, 7)))


if __name__ == "__main__":
    main()
