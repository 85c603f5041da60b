# lit configuration for bertc: FileCheck suites over bertc, bertc-opt and the trainers.
import os
import shutil
import subprocess

import lit.formats

config.name = "bertc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".toml", ".test"]
# node_modules: the npm packages scripts/setup.sh installs under test/reference hold .toml
# files of their own.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "node_modules"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.bertc_build_dir, "test")
# lit starts the slowest tests first by the times it recorded in the build tree's
# .lit_test_times.txt; in a fresh build it reads the source tree's (test/.lit_test_times.txt,
# seconds measured on a 2-core machine), so that a 3000-step training does not start last.

config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# bertc plans --target cuda for this machine's GPU when neither --arch nor BERTC_ARCH names
# one: the tests plan for sm_80 wherever they run (test/Driver/local-gpu.test unsets it).
config.environment["BERTC_ARCH"] = "sm_80"
config.environment["PATH"] = os.pathsep.join(
    [config.bertc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%src", config.bertc_source_dir))
config.substitutions.append(("%bertc_lib", os.path.join(config.bertc_build_dir, "lib")))
config.substitutions.append(("%python", "python3"))

if config.nvcc:
    config.available_features.add("nvcc")

# A machine with an NVIDIA GPU (its driver lists one) runs the CUDA trainers themselves.
if shutil.which("nvidia-smi") and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, text=True).stdout.startswith("GPU"):
    config.available_features.add("cuda-device")

# The PyTorch reference runs where Debian's python3-torch is installed (scripts/setup.sh
# installs it); elsewhere the parity tests report themselves unsupported (skipped), except
# under CI=true, where they run and fail, so that CI cannot skip them silently.
torch_found = os.path.exists("/usr/bin/python3") and subprocess.call(
    ["/usr/bin/python3", "-c", "import torch"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
if not torch_found and os.environ.get("CI") == "true":
    lit_config.warning("CI=true but /usr/bin/python3 cannot import torch: the parity tests "
                       "will fail (scripts/setup.sh installs python3-torch)")
if torch_found or os.environ.get("CI") == "true":
    config.available_features.add("torch")
config.substitutions.append(("%torch_python", "/usr/bin/python3"))

# Hugging Face's tokenizers library, through the Node binding that scripts/setup.sh installs
# with npm into test/reference/hf_tokenizers, is the reference of test/tokenizer/: where node
# cannot load it those tests report themselves unsupported, except under CI=true, as above.
hf_tokenizers_dir = os.path.join(config.bertc_source_dir, "test", "reference", "hf_tokenizers")
hf_tokenizers_found = shutil.which("node") is not None and subprocess.call(
    ["node", "-e", "require('@anush008/tokenizers')"], cwd=hf_tokenizers_dir,
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
if not hf_tokenizers_found and os.environ.get("CI") == "true":
    lit_config.warning("CI=true but node cannot load @anush008/tokenizers: the tokenizer tests "
                       "will fail (scripts/setup.sh installs it)")
if hf_tokenizers_found or os.environ.get("CI") == "true":
    config.available_features.add("hf-tokenizers")
# @huggingface/jinja, from the same package.json, renders real chat templates for
# test/tokenizer/chat-templates.test (an install from before it was added lacks it).
hf_jinja_found = hf_tokenizers_found and subprocess.call(
    ["node", "-e", "require('@huggingface/jinja')"], cwd=hf_tokenizers_dir,
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
if not hf_jinja_found and os.environ.get("CI") == "true":
    lit_config.warning("CI=true but node cannot load @huggingface/jinja: the chat template "
                       "tests will fail (scripts/setup.sh installs it)")
if hf_jinja_found or os.environ.get("CI") == "true":
    config.available_features.add("hf-jinja")
config.substitutions.append(("%hf_tokenizers", hf_tokenizers_dir))

# Flags for every trainer bertc builds (a sanitizer build passes -fsanitize=... this way).
if "BERTC_TRAINER_CXXFLAGS" in os.environ:
    config.environment["BERTC_TRAINER_CXXFLAGS"] = os.environ["BERTC_TRAINER_CXXFLAGS"]
