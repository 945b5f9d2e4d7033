"""exportcore.zoo without pytest's plugin: spec parsing, listing, inputs and dynamic dims per family, budget, offline."""

from __future__ import annotations

import socket

import pytest

from exportcore.zoo import ZooSkip, ZooSpecError, build, expand, parse_spec

torch = pytest.importorskip("torch")


def test_parse_spec_kinds_and_errors() -> None:
    assert parse_spec("timm:test_*") == ("timm", "test_*", False)
    assert parse_spec("hf:bert@AutoModelForCausalLM") == ("hf", "bert@AutoModelForCausalLM", False)
    assert parse_spec("my.models:make") == ("factory", "my.models:make", False)
    assert parse_spec("!*vit*") == ("", "*vit*", True)
    assert parse_spec("!timm:test_vit*") == ("timm", "test_vit*", True)
    for bad, says in [("resnet18", "expected KIND:GLOB"), ("tmm:x*", "unknown kind 'tmm'"), ("!", "is empty")]:
        with pytest.raises(ZooSpecError, match=says):
            parse_spec(bad)


def test_torchvision_lists_groups_and_infers_batch_only() -> None:
    pytest.importorskip("torchvision")
    entries = expand(["torchvision:classification/resnet1*", "torchvision:fasterrcnn_mobilenet_v3_large_320_fpn"])
    assert [e.zoo_id for e in entries] == ["torchvision/resnet101", "torchvision/resnet152", "torchvision/resnet18",
                                           "torchvision/fasterrcnn_mobilenet_v3_large_320_fpn"]
    case = build(entries[2])
    assert case.args[0].shape == (2, 3, 224, 224)
    (dims,) = case.dynamic_shapes
    assert list(dims) == [0] and dims[0].min == 2  # batch only: torchvision declares no size range
    assert "crop size" in case.note and "H/W static" in case.note
    detection = build(entries[3])
    assert detection.dynamic_shapes is None and isinstance(detection.args[0], list)
    assert "targets" in detection.unsupported_modes["training"]


def test_timm_image_dims_follow_pretrained_cfg() -> None:
    timm = pytest.importorskip("timm")
    fixed = build(expand(["timm:test_coatnet"])[0])  # fixed_input_size: H/W static
    assert list(fixed.dynamic_shapes[0]) == [0] and "fixed_input_size" in fixed.note
    free = build(expand(["timm:test_resnet"])[0])
    cfg = timm.create_model("test_resnet").pretrained_cfg
    assert not cfg.get("fixed_input_size", False)
    dims = free.dynamic_shapes[0]
    assert sorted(dims) == [0, 2, 3] and dims[2].max == cfg["input_size"][1]
    vit = build(expand(["timm:test_vit"])[0])  # dynamic_img_size: multiples of the patch size
    assert vit.model.dynamic_img_size and "patch size 16x16 from two patches (32..160" in vit.note
    assert vit.dynamic_shapes[0][2].__name__.startswith("16*")  # str() of a derived Dim is a class repr on 2.6
    # from two patches: torch narrows a one-patch minimum away, so 16x16 is not promised
    assert vit.dynamic_shapes[0][2].root.min == 2 and vit.dynamic_shapes[0][3].root.min == 2


class _Timmish(torch.nn.Module):
    """A model with only the metadata image_spec reads (timm's pretrained_cfg and feature_info)."""

    def __init__(self, size: int, reduction: int, **cfg: object) -> None:
        super().__init__()
        self.pretrained_cfg = {"input_size": (3, size, size), "fixed_input_size": False, **cfg}
        self.feature_info = [{"reduction": reduction // 2}, {"reduction": reduction}]


def test_timm_image_dims_never_start_below_two_reductions() -> None:
    from exportcore.zoo.timm_zoo import image_spec, total_reduction

    assert total_reduction(_Timmish(96, 32)) == 32 and total_reduction(torch.nn.Linear(2, 2)) is None
    _, dims, note = image_spec(_Timmish(96, 32))  # half of 96 is 48: under two reductions of 32
    assert (dims[2].min, dims[2].max) == (64, 96) and "at least two reductions of 32 (feature_info)" in note
    _, dims, note = image_spec(_Timmish(224, 32, min_input_size=(3, 32, 32)))
    assert dims[3].min == 64 and "min_input_size, at least two reductions" in note
    _, dims, note = image_spec(_Timmish(160, 32))  # half the default size is already above: unchanged
    assert (dims[2].min, dims[2].max) == (80, 160) and "reductions" not in note
    _, dims, note = image_spec(_Timmish(48, 32))  # no range fits: the batch only, and the row says why
    assert dims == {} and "only the batch is dynamic: H/W from 64x64" in note


def test_hf_text_inputs_stay_in_vocab_and_positions() -> None:
    pytest.importorskip("transformers")
    bert = build(expand(["hf:bert"])[0])
    ids = bert.kwargs["input_ids"]
    vocab = bert.model.config.vocab_size
    assert vocab <= 1024 and int(ids.max()) < vocab and int(ids.min()) >= 0
    seq = bert.dynamic_shapes["input_ids"][1]
    assert seq.max <= bert.model.config.max_position_embeddings and seq is bert.dynamic_shapes["attention_mask"][1]
    assert bert.model.config.num_hidden_layers == 2 and "max_position_embeddings 512" in bert.note
    t5 = build(expand(["hf:t5@AutoModelForSeq2SeqLM"])[0])
    assert "decoder_input_ids" in t5.kwargs and "encoder-decoder" in t5.note
    vit = build(expand(["hf:vit"])[0])
    assert set(vit.kwargs) == {"pixel_values"} and list(vit.dynamic_shapes["pixel_values"]) == [0]


@pytest.mark.parametrize("kind", ["gptj", "codegen"])
def test_hf_rotary_models_shrink_their_rotary_dim_with_the_heads(kind: str) -> None:
    pytest.importorskip("transformers")
    case = build(expand([f"hf:{kind}"])[0])  # ZooSkip here: the shrunk config did not run in eager
    head = case.model.config.n_embd // case.model.config.n_head
    assert case.model.config.rotary_dim <= head and "rotary_dim=8" in case.note
    case.model(*case.args, **case.kwargs)


def test_hf_auto_class_is_checked() -> None:
    pytest.importorskip("transformers")
    assert expand(["hf:gpt2@AutoModelForCausalLM"])[0].zoo_id == "hf/gpt2@AutoModelForCausalLM"
    with pytest.raises(ZooSpecError, match="not a transformers auto model class"):
        expand(["hf:gpt2@GPT2Model"])


def test_exclusions_and_empty_specs() -> None:
    pytest.importorskip("timm")
    names = [e.name for e in expand(["timm:test_vit*", "!timm:test_vit2", "!*relpos*"])]
    assert "test_vit" in names and "test_vit2" not in names and "test_vit_relpos" not in names
    with pytest.raises(ZooSpecError, match="names no model"):
        expand(["timm:no_such_model_*"])


def test_budget_skips_before_building() -> None:
    pytest.importorskip("torchvision")
    with pytest.raises(ZooSkip, match=r"11\.7M parameters, over the budget of 1\.0M"):
        build(expand(["torchvision:resnet18"])[0], max_params=1_000_000)


def test_builders_open_no_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind builds with the network refused; a builder that tried would be caught either way."""
    pytest.importorskip("timm")
    pytest.importorskip("transformers")
    pytest.importorskip("torchvision")
    tried: list[object] = []

    def connect(self: socket.socket, address: object) -> None:
        tried.append(address)
        raise OSError("the test refuses network connections")

    monkeypatch.setattr(socket.socket, "connect", connect)
    attempts = []
    for spec in ["torchvision:squeezenet1_1", "torchvision:lraspp_mobilenet_v3_large", "timm:test_efficientnet",
                 "hf:gpt2@AutoModelForCausalLM", "hf:bert", "hf:resnet"]:
        attempts += build(expand([spec])[0]).network_attempts
    assert tried == [] and attempts == []


def test_a_builder_that_downloads_is_a_skip_naming_where(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    (tmp_path / "netmodels.py").write_text(
        "import socket, torch\n"
        "def make():\n"
        "    socket.create_connection(('198.51.100.7', 443), timeout=1)\n"
        "    return torch.nn.Linear(2, 2), (torch.randn(2, 2),)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ZooSkip, match=r"netmodels/make: building it tried to open a network connection to "
                                      r"198\.51\.100\.7:443 \(a download\)"):
        build(expand(["netmodels:make"])[0])


def test_timm_over_the_budget_is_shrunk_where_its_constructor_allows() -> None:
    """Counted on the meta device only: nothing here allocates a large model."""
    timm = pytest.importorskip("timm")
    from exportcore.zoo.common import ZooEntry
    from exportcore.zoo.timm_shrink import fit_budget

    def creator(name: str):  # type: ignore[no-untyped-def]
        return lambda **kwargs: timm.create_model(name, pretrained=False, **kwargs)

    vit = ZooEntry("timm", "vit_large_patch16_224", "timm")
    kwargs, params, note = fit_budget(vit, creator(vit.name), 100_000_000)
    assert kwargs == {"depth": 2} and params is not None and params < 30_000_000
    assert "depth=2 (from 24 blocks), 304.3M -> 27.2M parameters (widths kept)" in note
    assert fit_budget(vit, creator(vit.name), None) == ({}, None, "")  # no budget: nothing shrunk
    resnet = ZooEntry("timm", "resnet152", "timm")
    assert fit_budget(resnet, creator(resnet.name), 15_000_000)[:2] == ({"layers": [1, 1, 1, 1]}, 10_064_936)
    with pytest.raises(ZooSkip, match=r"convnext_large: 197\.8M parameters, over the budget of 30\.0M .*and 33\.0M "
                                      r"still with depths=\(1, 1, 1, 1\)"):
        fit_budget(ZooEntry("timm", "convnext_large", "timm"), creator("convnext_large"), 30_000_000)
    with pytest.raises(ZooSkip, match=r"644\.8M parameters.*RegNet takes no depth, depths or layers"):
        fit_budget(ZooEntry("timm", "regnety_1280", "timm"), creator("regnety_1280"), 100_000_000)
