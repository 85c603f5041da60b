//===- RopeFrequencies.cpp - a decoder's rotary inverse frequencies -------===//
//
// transformers computes these on fp32 tensors with Python float scalars, so each step
// below is one fp32 operation on an fp32 value and a float-rounded scalar, as there.
//
//===----------------------------------------------------------------------===//

#include "RopeFrequencies.h"

#include <cmath>

using namespace bertc;

namespace {

/// _compute_default_rope_parameters: 1.0 / (base ** (arange(0, dim, 2).float() / dim)).
llvm::SmallVector<float> defaultFrequencies(double theta, int64_t dim) {
  llvm::SmallVector<float> inverse;
  for (int64_t i = 0; i < dim; i += 2) {
    float exponent = float(i) / float(dim);
    inverse.push_back(1.0f / std::pow(float(theta), exponent));
  }
  return inverse;
}

/// _compute_llama3_parameters over the default frequencies.
void applyLlama3(llvm::SmallVector<float> &inverse, const RopeScaling &scaling) {
  const float factor = float(scaling.factor);
  const float low = float(scaling.lowFreqFactor);
  const float band = float(scaling.highFreqFactor - scaling.lowFreqFactor); // a Python float
  const float context = float(scaling.originalMaxPositionEmbeddings);
  const float lowWavelength =
      float(double(scaling.originalMaxPositionEmbeddings) / scaling.lowFreqFactor);
  const float highWavelength =
      float(double(scaling.originalMaxPositionEmbeddings) / scaling.highFreqFactor);
  const float twoPi = float(2 * M_PI);
  for (float &frequency : inverse) {
    float wavelength = twoPi / frequency;
    float scaled = wavelength > lowWavelength ? frequency / factor : frequency;
    bool medium = !(wavelength < highWavelength) && !(wavelength > lowWavelength);
    if (medium) {
      float smooth = (context / wavelength - low) / band;
      scaled = (1.0f - smooth) * scaled / factor + smooth * scaled;
    }
    frequency = scaled;
  }
}

} // namespace

llvm::SmallVector<float> bertc::ropeInverseFrequencies(const ModelSpec &model) {
  llvm::SmallVector<float> inverse = defaultFrequencies(model.ropeTheta, model.attentionHeadDim());
  const RopeScaling &scaling = model.ropeScaling;
  if (scaling.type == "linear")
    for (float &frequency : inverse)
      frequency /= float(scaling.factor);
  else if (scaling.type == "llama3")
    applyLlama3(inverse, scaling);
  return inverse;
}
