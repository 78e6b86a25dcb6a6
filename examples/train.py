"""A small image-classification training script with the classic GPU-wasting pitfalls.

`perf-lint check examples/` finds them; `perf-lint check --fix examples/train.py` fixes
what can be fixed safely. It also runs on a CPU (`python examples/train.py --epochs 1`).
"""

import argparse
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class SyntheticImages(Dataset):
    """Decodes (here: synthesizes) an image per item on the CPU, like a JPEG dataset would."""

    def __init__(self, size: int = 512) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        generator = torch.Generator().manual_seed(index)
        image = torch.rand(3, 64, 64, generator=generator)
        image = (image - image.mean()) / image.std()
        return image, index % 10


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--compile", action="store_true")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True

    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)
    ).to(device)
    if args.compile:
        model = torch.compile(model)
    if dist.is_available() and dist.is_initialized():
        model = DDP(model)

    loader = DataLoader(SyntheticImages(), batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) as prof:
        for epoch in range(args.epochs):
            start = time.perf_counter()
            for images, labels in loader:
                images = images.to(device, non_blocking=True)
                labels = labels.to(device, non_blocking=True)
                loss = loss_fn(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                prof.step()
            elapsed = time.perf_counter() - start
            print(f"epoch {epoch}: {elapsed:.2f}s, last loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
