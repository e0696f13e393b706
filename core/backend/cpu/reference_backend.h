#pragma once

// The plain reference backend: single-threaded loops written for clarity, the oracle every fast
// kernel (oneDNN, CUDA) is tested against (DESIGN.md). Sums that feed one output value are
// accumulated in double, so its rounding error is far below any fast kernel's.
//
// Every override stays virtual: the oneDNN backend derives from this class, replaces the heavy
// kernels (conv, linear, pool, activation, batch norm) and keeps the small ops of training.

#include "core/backend/backend.h"

namespace fb {

class ReferenceBackend : public Backend {
public:
    std::string name() const override;
    Device device() const override;
    bool supports(OpKind op) const override;
    // Stored for callers that ask; the reference kernels themselves always run on one thread.
    void setThreads(int threads) override;
    int threads() const { return m_threads; }

    Tensor empty(const Shape &shape, DType dtype = DType::F32) override;
    void copy(void *dst, const void *src, size_t bytes) override;
    void upload(void *dst, const void *host, size_t bytes) override;
    void download(void *host, const void *src, size_t bytes) override;
    void fill(float *y, float value, int64_t count) override;
    void zero(void *dst, size_t bytes) override;

    std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d) override;
    std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d) override;
    std::unique_ptr<PoolKernel> makePool(const PoolDesc &d) override;
    std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d) override;
    std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d) override;

    void add(const float *a, const float *b, float *y, int64_t count) override;
    void accumulate(float *y, const float *x, int64_t count) override;
    void axpby(float *y, const float *x, int64_t count, float a, float b) override;
    void gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                    int64_t rowElems) override;
    void gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index, int64_t n) override;

    LossResult softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n,
                                   int64_t classes, float *dlogits,
                                   float smoothing = 0.0f) override;
    float mse(const float *pred, const float *target, int64_t count, float *dpred) override;

    void dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                        uint64_t stepSeed, uint64_t salt) override;
    void dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count) override;

    void sgdStep(float *w, const float *g, float *buf, int64_t count, const SgdParams &p,
                 int64_t step) override;
    void adamStep(float *w, const float *g, float *m, float *v, int64_t count, const AdamParams &p,
                  int64_t step) override;

    LossResult latestLoss() override { return m_latestLoss; }

protected:
    int m_threads = 1;
    LossResult m_latestLoss;
};

// The reference kernels on their own, for backends that reuse some of them.
std::unique_ptr<ConvKernel> makeReferenceConv(const ConvDesc &d);
std::unique_ptr<LinearKernel> makeReferenceLinear(const LinearDesc &d);
std::unique_ptr<PoolKernel> makeReferencePool(const PoolDesc &d);
std::unique_ptr<ActivationKernel> makeReferenceActivation(const ActivationDesc &d);
std::unique_ptr<BatchNormKernel> makeReferenceBatchNorm(const BatchNormDesc &d);

} // namespace fb
