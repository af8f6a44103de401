#!/usr/bin/python3
"""The PyTorch twin of fashion_mnist.cpp: the same data, normalization, model,
initial weights (the same seed draws the same numbers), batch order and
optimizer. fashion_mnist --compare runs it and prints both side by side; it
prints one line per epoch: "epoch E loss L accuracy A seconds S". With
--score FILE it then loads FILE (tessera's checkpoint) into the same model and
prints "checkpoint accuracy A"."""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def load_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def dataset(root, prefix):
    def find(name):
        path = os.path.join(root, name)
        return path if os.path.exists(path) else path + ".gz"
    images = torch.from_numpy(load_idx(find(prefix + "-images-idx3-ubyte")).astype(np.float32)) / 255
    labels = torch.from_numpy(load_idx(find(prefix + "-labels-idx1-ubyte")).astype(np.int64))
    return TensorDataset(((images - 0.2860) / 0.3530).unsqueeze(1), labels)


def model_for(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(1568, 10))


def accuracy(model, test):
    model.eval()
    right = 0
    with torch.no_grad():
        for x, y in DataLoader(test, batch_size=1000):
            right += int((model(x).argmax(1) == y).sum())
    model.train()
    return right / len(test)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp")
    p.add_argument("--epochs", type=int, default=0)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--score", default="")
    a = p.parse_args()
    epochs = a.epochs or (5 if a.model == "mlp" else 3)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train, test = dataset(a.data, "train"), dataset(a.data, "t10k")
    model = model_for(a.model)
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loader = DataLoader(train, batch_size=a.batch, shuffle=True)
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        total, batches = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        seconds = time.perf_counter() - start
        print("epoch %d loss %.6f accuracy %.6f seconds %.4f" % (epoch, total / batches, accuracy(model, test), seconds),
              flush=True)
    if a.score:
        model.load_state_dict(torch.load(a.score))
        print("checkpoint accuracy %.6f" % accuracy(model, test), flush=True)


if __name__ == "__main__":
    sys.exit(main())
