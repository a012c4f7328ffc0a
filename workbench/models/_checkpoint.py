r"""Reading a Hugging Face-layout checkpoint directory: ``config.json``, safetensors weights, ``tokenizer.json``.

A checkpoint directory holds

- ``config.json``: the architecture (read by :func:`~workbench.models.parse_architecture`);
- the weights, either one ``model.safetensors`` or a sharded set ``model.safetensors.index.json`` plus the
  shards it names (its ``weight_map`` sends each tensor name to its shard file);
- ``tokenizer.json``: the tokenizer, read with the ``tokenizers`` library (optional: without it only the
  id-level methods of a model work).

The safetensors format is read here byte by byte, so that no tensor is loaded before it is asked for and
every stored dtype is converted to float64 *exactly*: a file starts with an 8-byte little-endian unsigned
header length :math:`N`, then :math:`N` bytes of JSON naming each tensor's ``dtype``, ``shape`` and
``data_offsets`` ``[begin, end)`` (relative to the end of the header), then the tensor bytes, row-major and
little-endian.  float16 and float32 widen to float64 without rounding (numpy's ``astype``); bfloat16 is the
upper half of a float32, so its 16 bits shifted left by 16 and read as a float32 give the same number, which
again widens exactly.

References
----------
The safetensors format specification (Hugging Face, github.com/huggingface/safetensors, README "Format");
the ``transformers`` sharded-checkpoint index (``model.safetensors.index.json``, key ``weight_map``).
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

__all__ = ["Checkpoint", "SafetensorsFile", "read_checkpoint"]

WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"

# stored dtype -> (numpy dtype of the raw little-endian words, bytes per element)
_DTYPES = {
    "F64": ("<f8", 8),
    "F32": ("<f4", 4),
    "F16": ("<f2", 2),
    "BF16": ("<u2", 2),
}
_MAX_HEADER = 100_000_000  # the format's own bound on the JSON header (100 MB)

# Bits per element of every dtype the format defines (safetensors' Dtype): the header is checked for all of them,
# though only the floats of _DTYPES are read.  A tensor of a sub-byte dtype (F4, F6_*) must fill whole bytes, as
# the reference reader requires (4 F4 values in 2 bytes; 3 of them, 12 bits, are refused).
_BITS = {
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32,
    "I64": 64, "U64": 64, "F64": 64, "C64": 64,
}  # fmt: skip


def _count(value) -> bool:
    """A JSON non-negative integer (not a bool, not a float such as 2.0 or 2.5)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _directory(path) -> Path:
    directory = Path(path)
    if not directory.is_dir():
        found = "a file" if directory.exists() else "nothing"
        raise FileNotFoundError(
            f"model directory not found: path must be a folder holding config.json and the weights, got "
            f"{str(directory)!r} ({found} there)"
        )
    return directory


def read_json(path: Path, what: str) -> dict:
    """The JSON object in ``path``; FileNotFoundError if missing, ValueError if not a JSON object."""
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path} does not exist")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{what} {path} is not valid JSON ({error})") from error
    except RecursionError:  # a hostile file of nested brackets; no configuration nests past a few levels
        raise ValueError(f"{what} {path} nests its JSON too deeply to be a configuration") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} {path} must hold a JSON object, got a {type(value).__name__}")
    return value


def to_float64(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Widen raw little-endian words of a stored ``dtype`` ("F64", "F32", "F16", "BF16") to float64, exactly."""
    if dtype == "BF16":
        # bfloat16 is the top half of a float32: shifting its bits up by 16 gives that float32 exactly
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return raw.astype(np.float64)


class SafetensorsFile:
    """One safetensors file, its header parsed and checked; tensors read on demand as float64.

    Parameters
    ----------
    path : str or Path
        The ``.safetensors`` file.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        The file is not a well-formed safetensors file (the message names the file, what was expected and
        what was found).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from safetensors.numpy import save_file
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, path)
    >>> f = SafetensorsFile(path)
    >>> f.names, f.shape("w"), f.dtype("w")
    (('w',), (2, 3), 'F32')
    >>> f.read("w").dtype
    dtype('float64')
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"safetensors file not found: {self.path} does not exist")
        size = self.path.stat().st_size
        with self.path.open("rb") as stream:
            head = stream.read(8)
            if len(head) < 8:
                raise ValueError(
                    f"{self.path} is not a readable safetensors file: expected an 8-byte header length, found a "
                    f"file of {size} bytes"
                )
            (length,) = struct.unpack("<Q", head)
            if length > min(size - 8, _MAX_HEADER):
                # The length field's value is not printed: in a file that is no safetensors file it is the file's
                # first 8 bytes (of /etc/passwd: "root:x:0"), and an error message must not show file contents.
                raise ValueError(
                    f"{self.path} is not a readable safetensors file: its first 8 bytes must give the length of a "
                    f"JSON header of at most {min(size - 8, _MAX_HEADER)} bytes (the {size - 8} bytes that follow, "
                    f"at most 100 MB), and they do not"
                )
            text = stream.read(length)
        try:
            header = json.loads(text.decode("utf-8"))
        except RecursionError:  # nested brackets: no safetensors header nests past two levels
            raise ValueError(
                f"{self.path} is not a readable safetensors file: its JSON header nests too deeply"
            ) from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            # Only the position: a decoding error's own text quotes the offending byte.
            where = error.start if isinstance(error, UnicodeDecodeError) else error.pos
            raise ValueError(
                f"{self.path} is not a readable safetensors file: expected a JSON header of {length} bytes, found "
                f"bytes that are not UTF-8 JSON (at byte {where} of the header)"
            ) from None
        if not isinstance(header, dict):
            raise ValueError(
                f"{self.path} is not a readable safetensors file: expected a JSON object header, found a "
                f"{type(header).__name__}"
            )
        metadata = header.pop("__metadata__", None)
        if metadata is not None and not (
            isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
        ):
            raise ValueError(
                f"{self.path} is not a readable safetensors file: its __metadata__ must map names to strings"
            )
        self.metadata = metadata or {}
        self._start = 8 + length
        data_size = size - self._start
        self._entries: dict[str, tuple[str, tuple[int, ...], int, int]] = {}
        # As strictly as the reference reader (safetensors' own validation): every entry an object with a known
        # dtype, a shape of whole non-negative numbers and two offsets; the byte ranges, sorted, must tile the data
        # exactly (no two tensors sharing bytes, no gap, nothing past the end).
        for name, entry in header.items():
            dtype = entry.get("dtype") if isinstance(entry, dict) else None
            shape = entry.get("shape") if isinstance(entry, dict) else None
            offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
            well_formed = (
                dtype in _BITS
                and isinstance(shape, list)
                and all(_count(d) for d in shape)
                and isinstance(offsets, list)
                and len(offsets) == 2
                and all(_count(o) for o in offsets)
            )
            if not well_formed:
                raise ValueError(
                    f"{self.path} is not a readable safetensors file: the header entry of tensor {name!r} must have a "
                    f"dtype (one of {', '.join(_BITS)}), a shape of whole non-negative numbers and two whole "
                    "data_offsets"
                )
            begin, end = offsets
            bits = math.prod(shape) * _BITS[dtype]
            if bits % 8:
                raise ValueError(
                    f"{self.path} is not a readable safetensors file: tensor {name!r} ({dtype}, shape {list(shape)}) "
                    f"holds {bits} bits, which do not fill whole bytes"
                )
            expected = bits // 8
            if not begin <= end <= data_size or end - begin != expected:
                raise ValueError(
                    f"{self.path} is not a readable safetensors file: tensor {name!r} ({dtype}, shape "
                    f"{list(shape)}) needs {expected} bytes inside the {data_size} data bytes, found data_offsets "
                    f"[{begin}, {end}]"
                )
            self._entries[name] = (dtype, tuple(shape), begin, end)
        position = 0
        for name, (_, _, begin, end) in sorted(self._entries.items(), key=lambda item: item[1][2:]):
            if begin != position:
                what = (
                    "shares bytes with another tensor"
                    if begin < position
                    else f"leaves bytes {position}–{begin} unused"
                )
                raise ValueError(
                    f"{self.path} is not a readable safetensors file: tensor {name!r} (data_offsets [{begin}, {end}]) "
                    f"{what}; the tensors' byte ranges must tile the data exactly"
                )
            position = end
        if position != data_size:
            raise ValueError(
                f"{self.path} is not a readable safetensors file: its tensors cover {position} of the {data_size} "
                "data bytes; the byte ranges must tile the data exactly"
            )

    @property
    def names(self) -> tuple[str, ...]:
        """The tensor names, in header order."""
        return tuple(self._entries)

    def _entry(self, name: str):
        if not isinstance(name, str) or name not in self._entries:
            raise ValueError(
                f"name must be a tensor of safetensors file {self.path} (one of its {len(self._entries)} names), got "
                f"{name!r}"
            )
        return self._entries[name]

    def shape(self, name: str) -> tuple[int, ...]:
        """The stored shape of tensor ``name``."""
        return self._entry(name)[1]

    def dtype(self, name: str) -> str:
        """The stored dtype of tensor ``name`` (a safetensors code: "F32", "BF16", ...)."""
        return self._entry(name)[0]

    def read(self, name: str) -> np.ndarray:
        """Tensor ``name`` as a float64 array, converted exactly from F64/F32/F16/BF16.

        Raises
        ------
        ValueError
            No such tensor, or it is stored in another dtype (integers, float8...).
        """
        dtype, shape, begin, end = self._entry(name)
        if dtype not in _DTYPES:
            raise ValueError(
                f"tensor {name!r} in {self.path} must be stored as one of {', '.join(_DTYPES)}, found dtype {dtype}"
            )
        words, _ = _DTYPES[dtype]
        with self.path.open("rb") as stream:
            stream.seek(self._start + begin)
            raw = np.frombuffer(stream.read(end - begin), dtype=words)
        return to_float64(raw, dtype).reshape(shape)


def _contained(directory: Path, name, index: Path | None) -> Path:
    """``directory / name`` for a weights file, refused unless it stays inside the checkpoint.

    An index is data from wherever the checkpoint came from: a shard named ``../x``, ``/etc/passwd`` or
    ``/proc/self/environ``, or a file that is a symlink out of the folder, would be opened on the index's word.
    The name must be a relative path without ``..``, and the file, symlinks followed, must lie inside the folder
    — or, for a snapshot of the Hugging Face hub cache (``<repo>/snapshots/<revision>/``, whose files are
    symlinks to ``<repo>/blobs/``), inside that repository's ``blobs`` folder.
    """
    what = f"sharded-weights index {index} names shard" if index is not None else "weights file"
    relative = Path(name) if isinstance(name, str) and name else None
    if relative is None or relative.is_absolute() or ".." in relative.parts:
        raise ValueError(
            f"{what} {name!r}: a weights file must be a relative file name inside the checkpoint folder "
            "(no '..', no absolute path)"
        )
    root = directory.resolve()
    roots = [root]
    if root.parent.name == "snapshots":
        roots.append(root.parent.parent / "blobs")
    target = (directory / relative).resolve()
    if not any(target.is_relative_to(allowed) for allowed in roots):
        raise ValueError(
            f"{what} {name!r}: it leads out of the checkpoint folder {directory} through a symbolic link; a "
            "weights file must lie inside the folder (or in the blobs of a Hugging Face cache snapshot)"
        )
    return directory / relative


class Checkpoint:
    """A Hugging Face-layout checkpoint directory: its configuration, its weights (one file or shards), its tokenizer.

    Tensors are read one at a time on demand (:meth:`read`), so a caller holding only what it needs keeps memory
    near the size of the float64 model rather than of every copy at once.

    Parameters
    ----------
    path : str or Path
        The directory.

    Attributes
    ----------
    directory : Path
    config : dict
        ``config.json``.
    weight_files : tuple of Path
        The safetensors files (one, or the shards named by the index).

    Raises
    ------
    FileNotFoundError
        The directory, ``config.json``, the weights or a shard named by the index is missing.
    ValueError
        A file is corrupt, or the index names a tensor its shard does not hold.
    """

    def __init__(self, path):
        self.directory = _directory(path)
        self.config = read_json(self.directory / CONFIG_FILE, "model configuration")
        single, index = self.directory / WEIGHTS_FILE, self.directory / INDEX_FILE
        self._where: dict[str, SafetensorsFile] = {}
        if single.is_file():
            files = [SafetensorsFile(_contained(self.directory, WEIGHTS_FILE, None))]
            for name in files[0].names:
                self._where[name] = files[0]
        elif index.is_file():
            weight_map = read_json(index, "sharded-weights index").get("weight_map")
            if not isinstance(weight_map, dict) or not weight_map:
                raise ValueError(
                    f"sharded-weights index {index} must have a nonempty 'weight_map' object (tensor name -> shard "
                    f"file), found {type(weight_map).__name__}"
                )
            opened: dict[str, SafetensorsFile] = {}
            for name, shard in weight_map.items():
                if shard not in opened:
                    opened[shard] = SafetensorsFile(_contained(self.directory, shard, index))
                if name not in opened[shard].names:
                    raise ValueError(
                        f"sharded-weights index {index} puts tensor {name!r} in {shard}, but that shard does not "
                        f"hold it (it holds {len(opened[shard].names)} tensors)"
                    )
                self._where[name] = opened[shard]
            files = list(opened.values())
        else:
            raise FileNotFoundError(
                f"model weights not found: {single} does not exist (nor {INDEX_FILE}, the index of a sharded "
                "checkpoint)"
            )
        self.weight_files = tuple(f.path for f in files)

    @property
    def names(self) -> tuple[str, ...]:
        """Every tensor name of the checkpoint."""
        return tuple(self._where)

    def __contains__(self, name) -> bool:
        return name in self._where

    def shape(self, name: str) -> tuple[int, ...]:
        """The stored shape of tensor ``name``."""
        return self._file(name).shape(name)

    def dtype(self, name: str) -> str:
        """The stored dtype of tensor ``name``."""
        return self._file(name).dtype(name)

    def _file(self, name: str) -> SafetensorsFile:
        if not isinstance(name, str) or name not in self._where:
            raise ValueError(
                f"model weights in {self.directory} lack tensor {name!r} (name must be one of its {len(self._where)} "
                f"tensor names); is it a checkpoint of the model type its config.json names "
                f"({self.config.get('model_type')!r})?"
            )
        return self._where[name]

    def read(self, name: str) -> np.ndarray:
        """Tensor ``name`` as float64 (exact); ValueError naming the tensor if it is missing or not finite."""
        array = self._file(name).read(name)
        if not np.all(np.isfinite(array)):
            raise ValueError(f"tensor {name!r} in {self._where[name].path} has non-finite entries")
        return array

    def tokenizer(self):
        """The ``tokenizers.Tokenizer`` of ``tokenizer.json``, or None when the directory has none.

        Raises
        ------
        ValueError
            ``tokenizer.json`` exists but cannot be read.
        """
        path = self.directory / TOKENIZER_FILE
        if not path.is_file():
            return None
        from tokenizers import Tokenizer

        try:
            return Tokenizer.from_file(str(path))
        except Exception as error:  # tokenizers raises a bare Exception on malformed files
            raise ValueError(f"tokenizer file {path} could not be read ({error})") from error

    def sentence_config(self) -> dict:
        """``sentence_bert_config.json`` (sentence-transformers' settings, e.g. ``max_seq_length``), or {}."""
        path = self.directory / "sentence_bert_config.json"
        return read_json(path, "sentence-transformers configuration") if path.is_file() else {}


def read_checkpoint(path) -> Checkpoint:
    """Open the checkpoint directory ``path`` (see :class:`Checkpoint`)."""
    return Checkpoint(path)
