"""TPL101/TPL102 and the cost of a loader's dataset (perf_lint.analyzers.datasets): classes
followed into the modules next to the file, what the message says, and shapes around the
one-batch and collate_fn rules."""

from __future__ import annotations

import textwrap

from perf_lint.analyzers import analyze, importers, python_source, read_source


def findings(code: str, rule: str = "TPL101"):
    return [f for f in analyze(python_source(textwrap.dedent(code), "t.py")) if f.code == rule]


def project(tmp_path, files: dict[str, str], rule: str = "TPL101", main: str = "train.py"):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return [f for f in analyze(read_source(str(tmp_path / main))) if f.code == rule]


IMAGES = """
    from PIL import Image
    from torch.utils.data import Dataset


    class ImageDataset(Dataset):
        def __init__(self, paths, transform=None):
            self.paths = paths

        def __getitem__(self, i):
            return self.load(self.paths[i])

        def load(self, path):
            return Image.open(path)
"""

TOKENS = """
    import torch
    from torch.utils.data import Dataset


    class TokenDataset(Dataset):
        def __init__(self, ids):
            self.input_ids = [torch.tensor(x) for x in ids]

        def __getitem__(self, idx):
            return self.input_ids[idx], self.input_ids[idx].clone()
"""


def test_a_class_of_the_module_next_to_the_file_is_followed(tmp_path):
    found = project(tmp_path, {"data.py": IMAGES, "train.py": """
        from torch.utils.data import DataLoader
        from data import ImageDataset
        loader = DataLoader(ImageDataset(paths), batch_size=8)
    """})
    assert len(found) == 1
    assert "`ImageDataset.__getitem__` decodes an image per item (`Image.open(path)`, data.py:14)" in found[0].message


def test_a_relative_import_and_a_package_reexport_are_followed(tmp_path):
    found = project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/data/__init__.py": "from .images import ImageDataset\n",
        "pkg/data/images.py": IMAGES,
        "pkg/data/tokens.py": TOKENS,
        "pkg/train.py": """
            from torch.utils.data import DataLoader
            from .data import ImageDataset
            from .data.tokens import TokenDataset
            images = DataLoader(ImageDataset(paths), batch_size=8)
            tokens = DataLoader(TokenDataset(ids), batch_size=8)
        """,
    }, main="pkg/train.py")
    assert [f.range.start_line for f in found] == [4]  # the token loader indexes memory: silent
    assert "data/images.py:14" in found[0].message


def test_a_local_module_perf_lint_cannot_find_keeps_the_finding(tmp_path):
    found = project(tmp_path, {"train.py": """
        from torch.utils.data import DataLoader
        from data import TokenDataset
        loader = DataLoader(TokenDataset(ids), batch_size=8)
    """})
    assert len(found) == 1 and "__getitem__" not in found[0].message


def test_a_module_next_to_the_file_is_read_again_once_changed(tmp_path):
    files = {"data.py": TOKENS, "train.py": """
        from torch.utils.data import DataLoader
        from data import TokenDataset
        loader = DataLoader(TokenDataset(ids), batch_size=8)
    """}
    assert project(tmp_path, files) == []
    changed = TOKENS.replace("self.input_ids[idx].clone()", "torch.load(self.files[idx])") + "\n\n"
    assert len(project(tmp_path, {"data.py": changed})) == 1


def test_an_unknown_call_in_getitem_keeps_the_finding():
    found = findings("""
        import torch
        class Records(torch.utils.data.Dataset):
            def __getitem__(self, i):
                return parse_record(self.rows[i])
        loader = torch.utils.data.DataLoader(Records(), batch_size=8)
    """)
    assert len(found) == 1 and "__getitem__" not in found[0].message


def test_a_random_start_index_into_a_tensor_held_in_memory_is_cheap():
    """x-transformers' TextSamplerDataset: one random number per item picks where to slice
    a tensor that `a, b = x, y` unpacked (a copy of an array: `.clone()` keeps its rows); a
    random image is CPU work per item."""
    sampler = """
        import numpy as np
        import torch
        from torch.utils.data import DataLoader, Dataset
        class TextSamplerDataset(Dataset):
            def __init__(self, data, seq_len):
                self.data, self.seq_len = data, seq_len
            def __getitem__(self, index):
                rand_start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
                return self.data[rand_start: rand_start + self.seq_len + 1].long()
        train_x, valid_x = np.split(np.load("enwik8.npy"), [90])
        data_train, data_val = torch.from_numpy(train_x).clone(), torch.from_numpy(valid_x).clone()
        loader = DataLoader(TextSamplerDataset(data_train, 1024), batch_size=4)
        model = Net().cuda()
        for x in loader:
            model(x.cuda()).sum().backward()
    """
    assert findings(sampler) == []
    made_up = sampler.replace("return self.data[rand_start: rand_start + self.seq_len + 1].long()",
                              "return torch.rand(3, 224, 224)")
    assert len(findings(made_up)) == 1


def test_a_branch_the_construction_decides_is_left_out():
    """dgcnn's ModelNet40: point clouds held in memory, augmented only `if self.partition ==
    'train'`; the test set's items are slices (the train set's are CPU work per item)."""
    code = """
        import numpy as np
        import torch
        from torch.utils.data import DataLoader, Dataset
        class ModelNet40(Dataset):
            def __init__(self, num_points, partition='train'):
                self.data, self.label = load_data(partition)
                self.num_points = num_points
                self.partition = partition
            def __getitem__(self, item):
                pointcloud = self.data[item][:self.num_points]
                if self.partition == 'train':
                    pointcloud = translate_pointcloud(pointcloud)
                return pointcloud, self.label[item]
        loader = DataLoader(ModelNet40(partition='test', num_points=1024), batch_size=32)
        model = Net().cuda()
        for x, y in loader:
            model(x.cuda())
    """
    assert findings(code) == []
    assert len(findings(code.replace("partition='test'", "partition='train'"))) == 1
    assert len(findings(code.replace("partition='test', ", ""))) == 1  # (the default: 'train')


def test_an_hdf5_store_opened_in_init_is_read_per_item():
    found = findings("""
        import h5py
        import torch
        class H5(torch.utils.data.Dataset):
            def __init__(self, path):
                self.h = h5py.File(path, "r")
                self.images = self.h["images"]
            def __getitem__(self, i):
                return torch.from_numpy(self.images[i])
        loader = torch.utils.data.DataLoader(H5("x.h5"), batch_size=8)
    """)
    assert len(found) == 1 and "reads from an HDF5 file per item (`self.images[i]`)" in found[0].message


def test_a_wrapper_of_a_dataset_it_is_passed_costs_what_that_dataset_costs():
    code = """
        import torch
        from torchvision.datasets import ImageFolder
        class Indexed(torch.utils.data.Dataset):
            def __init__(self, base):
                self.base = base
            def __getitem__(self, i):
                return self.base[i], i
        loader = torch.utils.data.DataLoader(Indexed(BASE), batch_size=8)
    """
    assert "ImageFolder" in findings(code.replace("BASE", "ImageFolder('x')"))[0].message
    assert findings(code.replace("BASE", "torch.arange(10)")) == []
    assert len(findings(code.replace("BASE", "unknown"))) == 1


def test_a_dataset_made_by_a_function_of_the_file():
    code = """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        def features(model, images):
            feats = torch.cat([model(x) for x in images])
            return TensorDataset(feats, labels)
        def train(batch_size, train_feats):
            return DataLoader(train_feats, batch_size=batch_size, shuffle=True)
        train(64, features(model, images))
    """
    assert findings(code) == []


def test_tuple_unpacking_from_a_function_and_from_random_split():
    code = """
        import torch
        from torch.utils.data import DataLoader, random_split
        class Words(torch.utils.data.Dataset):
            def __init__(self, words):
                self.words = words
            def encode(self, word):
                return torch.tensor([self.stoi[c] for c in word], dtype=torch.long)
            def __getitem__(self, i):
                return self.encode(self.words[i])
        def make(lines):
            words = [w.strip() for w in lines]
            return Words(words[:100]), Words(words[100:])
        train, test = make(lines)
        a, b = random_split(train, [0.5, 0.5])
        loader = DataLoader(a, batch_size=32)
    """
    assert findings(code) == []  # `self.encode` is the class's own method, not a tokenizer


def test_a_bare_encode_call_is_not_read_as_a_string_method():
    code = """
        from torch.utils.data import DataLoader, Dataset
        from textlib import encode
        class Lines(Dataset):
            def __init__(self, lines):
                self.lines = lines
            def __getitem__(self, i):
                return encode(self.lines[i])
        loader = DataLoader(Lines(lines), batch_size=32)
    """
    found = [f for f in analyze(python_source(textwrap.dedent(code), "t.py")) if f.code in ("TPL000", "TPL101")]
    assert [f.code for f in found] == ["TPL101"]  # judged by its name, as `tok.encode(...)` is
    assert "tokenizes each item (`encode(self.lines[i])`)" in found[0].message


def test_one_batch_rule_sees_the_variable_not_the_name():
    code = """
        from torch.utils.data import DataLoader
        data_loader = DataLoader(ds, batch_size=8)
        batch = next(iter(data_loader))
        def train(model, data_loader):
            for x in data_loader:
                model(x)
        train(model, other_loader)
    """
    assert findings(code) == []  # `data_loader` in train() is its parameter
    used = code.replace("train(model, other_loader)", "train(model, data_loader)")
    assert len(findings(used)) == 1


def test_a_loop_that_may_go_on_is_not_one_batch():
    assert len(findings("""
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=8)
        for batch in loader:
            if batch is None:
                continue
            step(batch)
            break
    """)) == 1


def test_the_test_hook_of_a_module_that_does_not_train_is_reported():
    assert len(findings("""
        import lightning as L
        from torch.utils.data import DataLoader
        class Data(L.LightningDataModule):
            def test_dataloader(self):
                return DataLoader(self.test, batch_size=32)
    """)) == 1


def test_pinned_memory_toy_data_written_in_the_source_is_silent():
    code = """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        X = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [2.3, -1.1]])
        y = torch.tensor([0, 0, 1])
        loader = DataLoader(TensorDataset(X, y), batch_size=2, num_workers=2)
        for xb, yb in loader:
            xb, yb = xb.cuda(), yb.cuda()
    """
    assert findings(code, "TPL102") == []
    assert len(findings(code.replace("y = torch.tensor([0, 0, 1])", "y = torch.load('y.pt')"), "TPL102")) == 1


def test_pinned_memory_a_small_dataset_a_class_generates_is_silent():
    code = """
        import torch
        import torch.utils.data as data
        class Points(data.Dataset):
            def __init__(self, size, noise=0.1):
                super().__init__()
                self.size = size
                self.noise = noise
                self.make()
            def make(self):
                data = torch.randint(low=0, high=2, size=(self.size, 2), dtype=torch.float32)
                label = (data.sum(dim=1) == 1).to(torch.long)
                data += self.noise * torch.randn(data.shape)
                self.data, self.label = data, label
            def __len__(self):
                return self.size
            def __getitem__(self, idx):
                return self.data[idx], self.label[idx]
        loader = data.DataLoader(Points(size=1000), batch_size=128, shuffle=True)
        for epoch in range(100):
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
    """
    assert findings(code, "TPL102") == []  # 4,000 numbers in all
    assert len(findings(code.replace("Points(size=1000)", "Points(size=1_000_000)"), "TPL102")) == 1
    assert len(findings(code.replace("Points(size=1000)", "Points(size=n)"), "TPL102")) == 1
    loads = code.replace("data += self.noise", "data += torch.load('noise.pt') + self.noise")
    assert len(findings(loads, "TPL102")) == 1


def test_pinned_memory_batches_moved_by_the_collate_fn_are_silent():
    code = """
        import torch
        from torch.utils.data import DataLoader
        def collate(batch):
            return torch.stack(batch).cuda()
        loader = DataLoader(ds, batch_size=2, num_workers=2, collate_fn=collate)
        for xb in loader:
            xb = xb.to("cuda")
    """
    assert findings(code, "TPL102") == []
    assert len(findings(code.replace(".cuda()", ""), "TPL102")) == 1


def test_a_module_imported_whole_is_followed(tmp_path):
    found = project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/images.py": IMAGES,
        "pkg/train.py": """
            from torch.utils.data import DataLoader
            from . import images
            loader = DataLoader(images.ImageDataset(paths), batch_size=8)
        """,
    }, main="pkg/train.py")
    assert len(found) == 1 and "images.py:14" in found[0].message


def test_computing_an_item_is_work_moving_it_is_not():
    made = """
        import torch
        class Synthetic(torch.utils.data.Dataset):
            def __getitem__(self, index):
                image = torch.rand(3, 64, 64)
                for _ in range(16):
                    image = (image * 1.1).clamp_(0, 1).sqrt_()
                return image, index % 10
        loader = torch.utils.data.DataLoader(Synthetic(), batch_size=64)
    """
    assert len(findings(made)) == 1  # random images and elementwise passes: CPU work per item
    moved = """
        import torch
        class Rows(torch.utils.data.Dataset):
            def __getitem__(self, index):
                row = self.rows[index]
                ids = torch.tensor(row["ids"], dtype=torch.long)
                return ids, torch.zeros(len(row["ids"])).long(), row["text"].encode("utf-8")
        loader = torch.utils.data.DataLoader(Rows(), batch_size=64)
    """
    assert findings(moved) == []


DATA_UTILS = """
    import torch
    from torch.utils.data import ConcatDataset, Dataset, Subset


    class Tokenized(Dataset):
        def __init__(self, rows, pad_id):
            self.rows, self.pad_id = rows, pad_id

        def __getitem__(self, idx):
            ids, mask = self.rows[idx]["input_ids"], self.rows[idx]["attention_mask"]
            return {"input_ids": ids, "labels": torch.where(mask.bool(), ids, -100)}


    def make_split(texts, tokenizer):
        rows = []
        for text in texts:
            rows.append(tokenizer(text, return_tensors="pt"))
        return Tokenized(rows, tokenizer.pad_token_id)


    def make(name, tokenizer):
        train = load_raw(name)
        train = Subset(train, range(100))
        train = make_split(train, tokenizer)
        return train, make_split(load_raw(name + "-eval"), tokenizer)


    def cached(names, tokenizer, path):
        if not exists(path):
            parts = []
            for name in names:
                train, _ = make(name, tokenizer)
                parts.append(train)
            train = ConcatDataset(parts)
            train = Subset(train, shuffle(len(train)))
            torch.save(train, path)
        return torch.load(path), None
"""


def test_a_dataset_a_function_of_another_module_returns_is_followed(tmp_path):
    """Pre-tokenized rows built by a function of the project, concatenated, saved with
    torch.save and loaded back: indexing them is cheap, wherever they are made."""
    train = """
        from torch.utils.data import DataLoader
        from utils.data import cached
        train_ds, _ = cached(names, tokenizer, "cache.pt")
        loader = DataLoader(train_ds, batch_size=8)
        for batch in loader:
            step(batch)
    """
    assert project(tmp_path, {"utils/data.py": DATA_UTILS, "train.py": train}) == []
    tokenized_per_item = DATA_UTILS.replace('return {"input_ids": ids,', 'ids = self.tok(ids)\n            return {"input_ids": ids,')
    [finding] = project(tmp_path, {"utils/data.py": tokenized_per_item, "train.py": train})
    assert "tokenizes each item" in finding.message and "utils/data.py:" in finding.message
    unknown = DATA_UTILS.replace("torch.save(train, path)", "torch.save(train, other)")
    assert len(project(tmp_path, {"utils/data.py": unknown, "train.py": train})) == 1  # what it loads: not known


def test_a_dataset_class_bound_with_partial_is_costed():
    """uvadlc's ReverseDataset: made through `partial(ReverseDataset, 10, 16)`, flipping a row
    of a tensor it holds (data moved, not computed)."""
    code = """
        from functools import partial
        import torch
        from torch.utils import data
        class ReverseDataset(data.Dataset):
            def __init__(self, num_categories, seq_len, size):
                self.size = size
                self.data = torch.randint(num_categories, size=(size, seq_len))
            def __len__(self):
                return self.size
            def __getitem__(self, idx):
                return self.data[idx], torch.flip(self.data[idx], dims=(0,))
        dataset = partial(ReverseDataset, 10, 16)
        loader = data.DataLoader(dataset(50000), batch_size=128)
        for epoch in range(10):
            for x, y in loader:
                model(x.cuda()).sum().backward()
    """
    assert findings(code) == []
    assert len(findings(code.replace("torch.flip(self.data[idx], dims=(0,))", "torch.fft.fft(self.data[idx])"))) == 1


def test_a_dataset_of_encodings_tokenized_once_is_cheap():
    """The Hugging Face IMDb recipe: the texts are tokenized once, up front; each item indexes
    the token ids held in memory."""
    code = """
        import torch
        class IMDbDataset(torch.utils.data.Dataset):
            def __init__(self, encodings, labels):
                self.encodings = encodings
                self.labels = labels
            def __getitem__(self, idx):
                item = {key: torch.tensor(val[idx]) for key, val in self.encodings.items()}
                item["labels"] = torch.tensor(self.labels[idx])
                return item
            def __len__(self):
                return len(self.labels)
        train_encodings = tokenizer(list(train_texts), truncation=True, padding=True)
        train_labels = df.iloc[:35000]["sentiment"].values
        loader = torch.utils.data.DataLoader(IMDbDataset(train_encodings, train_labels), batch_size=16)
        for epoch in range(3):
            for batch in loader:
                model(batch["input_ids"].cuda()).loss.backward()
    """
    assert findings(code) == []
    per_item = code.replace('{key: torch.tensor(val[idx]) for key, val in self.encodings.items()}',
                            'tokenizer(self.encodings[idx], truncation=True)')
    assert len(findings(per_item)) == 1  # (tokenized item by item: the loader's time)


def test_a_loader_of_a_function_nothing_in_the_project_calls_is_dead_code(tmp_path):
    """pytorch-generative-model-collections' utils.py: `load_celebA` builds an ImageFolder loader
    without workers, and no script calls it (they call `load_mnist`); in a package (imagen-pytorch's
    `get_images_dataloader`) such a function is for its users."""
    utils = """
        import torch
        from torchvision import datasets, transforms
        from torch.utils.data import DataLoader

        def load_mnist(batch_size):
            return DataLoader(datasets.MNIST("data", transform=transforms.ToTensor()), batch_size=batch_size)

        def load_celebA(dir, batch_size):
            return DataLoader(datasets.ImageFolder(dir, transforms.ToTensor()), batch_size=batch_size)
    """
    main = """
        import torch
        import utils
        loader = utils.load_mnist(64)
        model = Net().cuda()
        for epoch in range(10):
            for x, y in loader:
                model(x.cuda()).sum().backward()
    """
    (tmp_path / ".git").mkdir()  # (a repository of scripts, not a package others import)
    found = project(tmp_path, {"utils.py": utils, "main.py": main}, main="utils.py")
    assert [f.range.start_line for f in found] == [6]
    (tmp_path / "main.py").write_text(textwrap.dedent(main).replace("load_mnist(64)", "load_celebA('img', 64)"))
    assert [f.range.start_line for f in project(tmp_path, {}, main="utils.py")] == [9]
    (tmp_path / "setup.py").write_text("")  # a package: its functions are for its users to call
    assert [f.range.start_line for f in project(tmp_path, {}, main="utils.py")] == [6, 9]


def test_a_loader_in_the_main_block_of_a_module_others_import_is_its_self_test(tmp_path):
    """FastSpeech2's dataset.py: `if __name__ == "__main__":` counts the batches of a loader
    without workers; train.py imports the module. Nothing imports it: the block is the job."""
    dataset = """
        import torch
        from PIL import Image
        from torch.utils.data import DataLoader, Dataset

        class Frames(Dataset):
            def __getitem__(self, i):
                return Image.open(self.paths[i])

        if __name__ == "__main__":
            loader = DataLoader(Frames(), batch_size=16)
            n_batch = 0
            for batch in loader:
                batch = batch.to("cuda")
                n_batch += 1
            print(n_batch)
    """
    (tmp_path / ".git").mkdir()
    alone = project(tmp_path, {"dataset.py": dataset}, main="dataset.py")
    assert [f.code for f in alone] == ["TPL101"]
    importers.forget()  # (a listing is kept for a few seconds)
    assert project(tmp_path, {"train.py": "from dataset import Frames\n"}, main="dataset.py") == []
    command = dataset.replace('if __name__ == "__main__":', 'if __name__ == "__main__":\n'
                              '            parser = argparse.ArgumentParser()\n'
                              '            parser.add_argument("--batch", type=int, default=16)')
    assert [f.code for f in project(tmp_path, {"dataset.py": command}, main="dataset.py")] == ["TPL101"]  # a command
