# gpu-check.sh's step 1: the GPU's name and architecture, and the build: configured and
# built here, or unpacked from a bundle with its libraries and CUDA's on LD_LIBRARY_PATH.
# Sourced by scripts/gpu-check.sh, whose variables and helpers it uses.

describe_gpu() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader \
      2>/dev/null | head -1
  else
    echo "no nvidia-smi (no NVIDIA driver?)"
  fi
}

# Sets gpu_capability to the first GPU's compute capability x 10, and arch to bertc's --arch
# for it: the newest architecture bertc knows (sm_75, sm_80, sm_86, sm_89, sm_90) that the
# GPU runs; a newer GPU gets sm_90, and says so.
detect_arch() {
  local cap number known best=""
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')
  [[ $cap =~ ^([0-9]+)\.([0-9]+)$ ]] && gpu_capability=$((BASH_REMATCH[1] * 10 + BASH_REMATCH[2]))
  if [[ -n ${BERTC_GPU_CHECK_ARCH:-} ]]; then
    arch=$BERTC_GPU_CHECK_ARCH
    record "GPU architecture" ok "$arch (BERTC_GPU_CHECK_ARCH)"
    return
  fi
  if [[ -z $gpu_capability ]]; then
    record "GPU architecture" "NOT RUN" "no GPU: nvidia-smi reports no compute capability"
    return
  fi
  number=$gpu_capability
  for known in 75 80 86 89 90; do
    ((known <= number)) && best=$known
  done
  if [[ -z $best ]]; then
    record "GPU architecture" "NOT RUN" "compute capability $cap is older than bertc's sm_75"
  elif ((number > 90)); then
    arch=sm_$best
    record "GPU architecture" ok "$arch (compute capability $cap is newer than bertc knows)"
  else
    arch=sm_$best
    record "GPU architecture" ok "$arch (compute capability $cap)"
  fi
}

configure_and_build() {
  local step_start deadline log="$build_dir/gpu-check-build.log" archs="native" status
  step_start=$(date +%s)
  deadline=$((step_start + $(step_limit 230)))
  mkdir -p "$build_dir"
  if ! within cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=native >"$log" 2>&1; then
    echo "gpu-check: configuring with CMAKE_CUDA_ARCHITECTURES=native failed; configuring without it"
    # The failed configure may have cached "native": start again from an empty cache.
    rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
    archs="bertc's default list"
    within cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1
    status=$?
    if [[ $status -ne 0 ]]; then
      tail -20 "$log"
      record "configure + build" FAILED "cmake $(outcome $status), see $log"
      return 1
    fi
  fi
  if ! grep -q 'bertc_cuda_kernel_tests' "$build_dir/build.ninja"; then
    record "configure + build" FAILED "no CUDA toolkit found (looked in PATH and /usr/local/cuda)"
    return 1
  fi
  within cmake --build "$build_dir" -j "$jobs" --target bertc bertc_cuda_kernel_tests \
    bertc_attention_time >>"$log" 2>&1
  status=$?
  if [[ $status -ne 0 ]]; then
    tail -30 "$log"
    record "configure + build" FAILED "build $(outcome $status), see $log"
    return 1
  fi
  record "configure + build" ok "$(($(date +%s) - step_start)) s, $jobs jobs, CUDA for $archs"
}

# manifest_field NAME: the value of the bundle MANIFEST's "NAME: value" line.
manifest_field() { sed -n "s/^$1: //p" "$bundle/MANIFEST" | head -1; }

# extract ARCHIVE DIR: tar's -J needs the xz program, which a slim image may lack; Python's
# tarfile reads .xz itself ("data" filter where this Python has it, to keep it quiet).
extract() {
  if command -v xz >/dev/null 2>&1; then
    timeout 60 tar -xJf "$1" -C "$2"
  else
    timeout 60 python3 -c 'import sys, tarfile
tarfile.open(sys.argv[1]).extractall(
    sys.argv[2], **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))' "$1" "$2"
  fi
}

# add_cuda_libraries BINARY: the bundle's binaries look for cudart and cuBLASLt through an
# rpath to the toolkit that built them (/usr/local/cuda/lib on that machine) and ldconfig's
# cache; for each that BINARY still lacks here (ldd: "not found"), this puts the directory that
# holds it on LD_LIBRARY_PATH: from this machine's CUDA toolkit, or from Python's nvidia pip
# packages (PyTorch's CUDA libraries).
add_cuda_libraries() {
  local name found roots=(/usr/local/cuda/) root
  while IFS= read -r root; do
    roots+=("$root/")
  done < <(python3 -c 'import nvidia; print(*nvidia.__path__, sep="\n")' 2>/dev/null)
  for name in $(ldd "$1" 2>/dev/null | awk '/not found/ { print $1 }'); do
    found=$(find "${roots[@]}" -name "$name" -print -quit 2>/dev/null)
    if [[ -n $found ]]; then
      export LD_LIBRARY_PATH="${found%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "gpu-check: $name from ${found%/*}"
    else
      echo "gpu-check: $name not found (looked in ${roots[*]})"
    fi
  done
}

# Step 1 for a bundle: unpacks it and puts its libraries, and CUDA's, on LD_LIBRARY_PATH.
unpack_bundle() {
  local step_start commit archs nvcc status
  step_start=$(date +%s)
  if [[ ! -f $bundle/MANIFEST || ! -f $bundle/bundle.tar.xz ]]; then
    record "build" FAILED "$bundle has no MANIFEST and bundle.tar.xz: rerun scripts/gpu-bundle.sh"
    return 1
  fi
  rm -rf "$prebuilt" && mkdir -p "$prebuilt"
  extract "$bundle/bundle.tar.xz" "$prebuilt"
  status=$?
  if [[ $status -ne 0 ]]; then
    record "build" FAILED "unpacking $bundle/bundle.tar.xz $(outcome $status)"
    return 1
  fi
  export LD_LIBRARY_PATH="$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  add_cuda_libraries "$prebuilt/bin/bertc_cuda_kernel_tests"
  commit=$(manifest_field commit) archs=$(manifest_field cuda-architectures)
  nvcc=$(manifest_field nvcc)
  record "build" ok "prebuilt bundle ${commit:0:12} (CUDA for $archs, nvcc $nvcc), unpacked in \
$(($(date +%s) - step_start)) s"
  # The commit alone would not do: the bundle may come from uncommitted sources, and this
  # tree is often a copy without .git.
  if [[ $(manifest_field sources) != "$(bash scripts/sources-fingerprint.sh)" ]]; then
    record "bundle sources" WARNING "the bundle (commit ${commit:0:12}) was built from other \
sources than this tree's$(git rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/ (HEAD /; s/$/)/'): \
rerun scripts/gpu-bundle.sh"
  fi
}
