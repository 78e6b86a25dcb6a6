"""TPL101/TPL102: batches loaded in the training process, copied from pageable memory.

Each item costs some CPU work (decoding, augmentation): with num_workers=0 the training
loop waits for it between steps. `perf-lint profile dataloader_sync.py --rule TPL101`.
"""

import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Decoded(Dataset):
    """Images "decoded" on the CPU: a few small numeric passes per item."""

    def __len__(self):
        return 4096

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        image = torch.rand(3, 64, 64, generator=g)
        for _ in range(16):
            image = (image * 1.1).clamp_(0, 1).sqrt_()
        return image, index % 10


model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 5, stride=4), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(16, 10),
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Decoded(), batch_size=64, shuffle=True)

for epoch in range(2):
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
