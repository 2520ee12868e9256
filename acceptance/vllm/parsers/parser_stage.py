"""Lays out the run directory of the parser-test step from vLLM's unpacked source distribution.

Usage: ``python acceptance/vllm/parsers/parser_stage.py SDIST_TREE RUN_DIR`` (run from the
repository root, with the interpreter that has the tokenizer fixtures' dependencies).

The run directory gets vLLM's parser test files (``tests/tool_parsers/``, ``tests/reasoning/``,
and the one helper module of ``tests/parser/engine/`` a tool-parser test imports) copied byte for
byte, each checked against the pinned release's sha256 (an edited copy cannot run, and a file
the release adds or drops fails the step), one model directory per entry of
``parser_models.MODELS`` (the fixture's files linked, beside a minimal ``config.json``), and
``fallbacks.json``: the directories of ``parser_models.FALLBACK``.
"""
# ruff: noqa: E501 (the sha256 manifest's lines)

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from parser_models import FALLBACK, MODEL_TYPE, MODELS  # noqa: E402

import fixtures  # noqa: E402

#: The directories whose every file the step copies (a new file there fails the step).
DIRECTORIES = ("tests/tool_parsers", "tests/reasoning")
#: vllm 0.33.0's source distribution: the files the step lays out, with their sha256.
FILES = {
    "tests/__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "tests/tool_parsers/__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "tests/tool_parsers/common_tests.py": "cba7cd5ed687046cd1cf526de6abea453e6ebc630a65e9e27ee1bf520e087c4c",
    "tests/tool_parsers/conftest.py": "f86b8bff47b55ea9ccec017eef97f1d98974712898cf645d113b0d52706709de",
    "tests/tool_parsers/test_apertus_tool_parser.py": "29ee1c7f5f74f7502959910e3183e8ed99a4036a4332f3792f6ddb48b9aa9ee9",
    "tests/tool_parsers/test_deepseekv31_tool_parser.py": "e955c20803bf3557a8f205f329caaf5db3740c7b622491890657c033a725dcb2",
    "tests/tool_parsers/test_deepseekv32_tool_parser.py": "6cae30309b0dcdf2c97b6d860c833273c43f64c0b9f399161b234dab34781990",
    "tests/tool_parsers/test_deepseekv3_tool_parser.py": "013d168ce7b1de5d9c5b3fbc92f9e2c62fcd10683dfbf0c4238a7ed6685583ba",
    "tests/tool_parsers/test_deepseekv4_tool_parser.py": "602bdebead6a2f19b477dd97a6a904871dbd11bf0ed36d6c86792743eed24fbf",
    "tests/tool_parsers/test_dots_tool_parser.py": "9b97908c56b66d97c8febd425de4bdfe552ef13bf84a8a736e7bfb1788f02c0f",
    "tests/tool_parsers/test_ernie45_moe_tool_parser.py": "43d463a1a602133b605dc47a839dc96fb1f00f9b79045e19b8270d1204d60f3f",
    "tests/tool_parsers/test_functiongemma_tool_parser.py": "a05b81ba522fa7f584eb817824599bf94c003bb89ce64ecf25a59af66b1a59cf",
    "tests/tool_parsers/test_gemma4_tool_parser.py": "865de9383a9cd081238fc4d844dae17baed0ac2a8382bd5d5c4795aed7197329",
    "tests/tool_parsers/test_gigachat3_tool_parser.py": "a1e7d8c141e172444446925d46fd529b26371b80131dfc2d0b19a02e9ab791c5",
    "tests/tool_parsers/test_glm47_moe_tool_parser.py": "02ed888cbb7ea634345c2ed96532ff323296e7f0122e6bc935d2fd2c46e03d31",
    "tests/tool_parsers/test_glm4_moe_tool_parser.py": "bfa20eb64de279b9224d992a74490aa750d22274054fb95c0e3969b59ef6e264",
    "tests/tool_parsers/test_granite4_tool_parser.py": "48e0b98ad757b905f6da0a3733f10f82e071d2c50b3659cb7b2b4b03deafc5fe",
    "tests/tool_parsers/test_granite_20b_fc_tool_parser.py": "9f72c1b5868946ef343243c5e40645a5b9c2830796092ca83f182120a046347c",
    "tests/tool_parsers/test_granite_tool_parser.py": "d910e6ebdefbfd2ba3fa700fd835f9db9f302f3f03a3023d63a6153e7e6016ac",
    "tests/tool_parsers/test_hermes_tool_parser.py": "52d967457a4af0487d58bb0e8f7ac739b82fc778a715a20def044553dc026476",
    "tests/tool_parsers/test_hunyuan_a13b_tool_parser.py": "cd8b66b5799ce9a65e05312eefdea58904032514e4612a78a7cf963693a479c3",
    "tests/tool_parsers/test_hy_v3_tool_parser.py": "524e65e4252e3811ff2b593e10a191f2d794bdbfd1137a1da4255dac03389985",
    "tests/tool_parsers/test_internlm2_tool_parser.py": "ac2d8f9651aa6214d1f3e82d2dd95bf591c661f58b766ed4cd8262982e5c65df",
    "tests/tool_parsers/test_jamba_tool_parser.py": "94cb9ed105e422e9ce37fb2e45d6f41daa6006b1fcb770bfb18fc8503c039058",
    "tests/tool_parsers/test_k2_horizon_tool_parser.py": "a31b9d6130d99f66abbbf4be509da5b3720549291c0229f947873aaf30a0307f",
    "tests/tool_parsers/test_kimi_k2_tool_parser.py": "9ea48e07d5f0d0bd9b5e629345d4834496a4b1bc5c0577e385587ce7197cc5f2",
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py": "bffb35db60157f1d3253e639fbfae4615315825d1964b020adb161d9d13fa18a",
    "tests/tool_parsers/test_lfm2_tool_parser.py": "cfbe580f402672171a99e5dec401d1f87551bc4fb1857a3ce3dd428899f2f905",
    "tests/tool_parsers/test_llama3_json_tool_parser.py": "bf39f4f30f155ac1e3a387e38e72d9d8835a9e6a63f0ecbcd9e2b7ebd0f835f2",
    "tests/tool_parsers/test_llama4_pythonic_tool_parser.py": "6d98ae643b227a25e817f66693cb5461c8c9e03710cdc688c4cc96bf21bef280",
    "tests/tool_parsers/test_longcat_tool_parser.py": "2d46fd45cd2719e64ea1ac61c03d140be1983c3f33205fe465103fdbaba57908",
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py": "2d311098b0118f0f8f1d220309b4e340c086871df7ee25ed9f83ca0cbbc00f7e",
    "tests/tool_parsers/test_minimax_m2_tool_parser.py": "825c803660bf998c185ed0251efa668816088571dd73c5d144cb69317ac20efb",
    "tests/tool_parsers/test_minimax_m3_tool_parser.py": "f966956f1ee99f867cad6b683fa14590c1c0286509bc4700c6a0462b7f3877f2",
    "tests/tool_parsers/test_olmo3_tool_parser.py": "9cc1da3c780b73d7316d894149f4a13efa02d14efc5e6b13d260386f30879563",
    "tests/tool_parsers/test_phi4mini_tool_parser.py": "2338f8ef594261e69a59656d02cc880e1ec9a278f0f6a5099b1abce2b6166920",
    "tests/tool_parsers/test_poolside_v1_tool_parser.py": "3b0ee662d6819848c71339805e198a6900bd27e54a704bbbc8fc7489ea590d8b",
    "tests/tool_parsers/test_pythonic_tool_parser.py": "55a584268c91f835abdf86ce4023a6c806e7abc3530b8e3f8c9ab674bdad0a3b",
    "tests/tool_parsers/test_qwen3coder_tool_parser.py": "3dc12ac25545ae9d78c596c93ef2beb1d7fc7b440334c3bca1b17c521c83c746",
    "tests/tool_parsers/test_step3_tool_parser.py": "740f7f8e565d317758bf0c516557e0f2322f73af9b7f3819f93f65c0a4b86398",
    "tests/tool_parsers/test_step3p5_tool_parser.py": "c9001932e7734cc32c6e447a3852d774c7836da79fe7e42ffb8e698dd4c1edc3",
    "tests/tool_parsers/test_structural_tag_registry.py": "6792eacc03f83c9fff57cbc20054a7e5191a0c14fd5f2b461bb04d84b359480f",
    "tests/tool_parsers/test_utils.py": "f77b593bd04979257978ef733cd55d616eb31482670f4d19464c6d63df4fe61c",
    "tests/tool_parsers/test_xlam_tool_parser.py": "ede55a4385c59b04e41be3605addbcfc5ef5fa91f7b7166be2545659d99f397c",
    "tests/tool_parsers/utils.py": "5ebf99a46e83ef4167e45f9f29696f5d83149b95544eeb95582372b7958e33f1",
    "tests/reasoning/__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "tests/reasoning/test_base_thinking_reasoning_parser.py": "cfb1443caf2e4848056904066ad8ec20402a1dc8bca2f98293c4c46dd45637df",
    "tests/reasoning/test_deepseekr1_reasoning_parser.py": "3432fa18cb41c893c91e6f0b0b1dfd59eb8caf42cbaa1b73cf252d96484d588d",
    "tests/reasoning/test_deepseekv3_reasoning_parser.py": "d59801a59ef1c5477d46676c13a80ba86f87170dfc9b27a6ea0c212ead3f98b2",
    "tests/reasoning/test_ernie45_reasoning_parser.py": "be007cf6b6bde76d8b51705623f8d9a5b0711b04acd96a1d35746c1ae3f9bb3b",
    "tests/reasoning/test_gemma4_reasoning_parser.py": "bce3ff09913f578503f560122c60090caccca5bf0df2b240fe31ff3d98f99c90",
    "tests/reasoning/test_glm4_moe_reasoning_parser.py": "1755b673b12686b887775c6cf4e7c97baf70941c75a4e169f8ac58f33b7e0595",
    "tests/reasoning/test_gptoss_reasoning_parser.py": "f069c130c7183e93561cbd4cad00f168c21a0be8ccf7d99bbded902edfe12dbc",
    "tests/reasoning/test_granite_reasoning_parser.py": "d2304eeb597d07277f0df1b5ad1e32ff4e8835ebea6f47b24876e1427c335a5f",
    "tests/reasoning/test_granite_thinking_reasoning_parser.py": "867e0c2ea5a42d0b12bf37d85e4b619fd90f0e19ed4fcdeaa52b465eb66023a7",
    "tests/reasoning/test_holo2_reasoning_parser.py": "267d98d9b67dee2226d72549c9689bbc2c471794678c07fe57ca40af260e2e45",
    "tests/reasoning/test_hunyuan_reasoning_parser.py": "c760a3c7abea69ed4767022fc0de23bb4fd56630ba7a42ab69ab826dbef42f2e",
    "tests/reasoning/test_hy_v3_reasoning_parser.py": "4a300522c9b4d3b0dc84924fdae901e17b1b2e930c44792bc6c569611f173b5b",
    "tests/reasoning/test_k2_horizon_reasoning_parser.py": "3754581e45e2752a7e62115e35398461dc2b983d1715a207ebd3a903e8e92e20",
    "tests/reasoning/test_kimi_k2_reasoning_parser.py": "01896562a70d10e1b6e117db843a1f0b2a11c5770fa8215c91a43658da0fd562",
    "tests/reasoning/test_kimi_k3_reasoning_parser.py": "75911c4e33a712bcbd558516e1123a7b795b75da208a4b64081e42c6320a2ad5",
    "tests/reasoning/test_minimax_m2_append_reasoning_parser.py": "b59d99b64a44e7b9f2cf5ed7e63ba6f34b919a2cbf46ff1a16f6bc0268cf6c16",
    "tests/reasoning/test_minimax_m2_reasoning_parser.py": "03f2c7c7f2c131c6954309e5c7d08643b9efdaa16494b92c8ba6ef7e187ebccc",
    "tests/reasoning/test_minimax_m3_reasoning_parser.py": "711d7106bb6cd7a4b567b192b2f416959441aeee4bda19a942562c39252f273d",
    "tests/reasoning/test_nemotron_v3_reasoning_parser.py": "b9087406b24a735752c3a8dd715d131dc68c1320359be7263566e03f9a228336",
    "tests/reasoning/test_olmo3_reasoning_parser.py": "d5ba637fc6f755cf1d5bfe6eed59632bd52473e0580df93c8620e13877dce890",
    "tests/reasoning/test_qwen3_reasoning_parser.py": "4ea4986ac807264d599c3833809a77080ef401a0a78e28124fab639d698f10cb",
    "tests/reasoning/test_step3_reasoning_parser.py": "8c7307d0062e3d471c4c693334f9af62ba2a4a25727e3211e152165ed6cac805",
    "tests/reasoning/test_step3p5_reasoning_parser.py": "b84bf1c1b49e30003c3d57b5efb79effebd892391b1279230f9ab977bc8749c2",
    "tests/reasoning/utils.py": "f1a18c1fc591642c68a18ee04e4ad057580766f8c59deb2272f2938dd2d24356",
    "tests/parser/__init__.py": "e3c55cbb0d7a8bd47df6f3378835644645f5d3bc89b45793b5d5a02d013e5c58",
    "tests/parser/engine/__init__.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "tests/parser/engine/replay_harness.py": "0d4ca1a67e49418910052efa7204371fa7bb41ddaa49662a5539496b4385b632",
}


def _model_type(fixture: str) -> str:
    base = fixtures.DERIVED[fixture][0] if fixture in fixtures.DERIVED else fixture
    return MODEL_TYPE[base]


def stage(sdist: Path, run: Path) -> None:
    found = {
        str(p.relative_to(sdist)) for d in DIRECTORIES for p in (sdist / d).iterdir() if p.is_file()
    }
    listed = {name for name in FILES if name.startswith(DIRECTORIES)}
    if found != listed:
        raise SystemExit(
            f"the source distribution's parser tests are not vllm 0.33.0's: new "
            f"{sorted(found - listed)}, gone {sorted(listed - found)}"
        )
    if run.exists():
        shutil.rmtree(run)
    for name, digest in FILES.items():
        data = (sdist / name).read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != digest:
            raise SystemExit(f"{name} of the source distribution is not vllm 0.33.0's ({got})")
        target = run / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for name, fixture in MODELS.items():
        # The fixture's files, linked (a tokenizer.json is 10 MB, and 29 names are laid out).
        target = run / name
        target.mkdir(parents=True)
        source = fixtures.model_dir(fixture)
        for file in ("tokenizer.json", "tokenizer_config.json"):
            (target / file).symlink_to(source / file)
        config = {"model_type": _model_type(fixture)}
        (target / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    fallbacks = {name: str(fixtures.model_dir(f)) for name, f in FALLBACK.items()}
    (run / "fallbacks.json").write_text(json.dumps(fallbacks, indent=2) + "\n")


if __name__ == "__main__":
    stage(Path(sys.argv[1]), Path(sys.argv[2]))
