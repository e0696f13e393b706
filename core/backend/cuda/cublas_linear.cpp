// Fully connected layers on cuBLAS. Our matrices are row-major and cuBLAS's column-major; a
// row-major [r, c] matrix is, read column-major with leading dimension c, its transpose [c, r].
// So every product below is written for the transposes, which cuBLAS sees without any copy:
//
//   x  [n, in]   is X = x^T   (in x n,  ld in)
//   w  [out, in] is W = w^T   (in x out, ld in)
//   y  [n, out]  is Y = y^T   (out x n, ld out), and dy is DY = dy^T the same way
//
//   forward       y  = x w^T   <=>  y^T  = w x^T    = W^T X :  gemm(T, N, m=out, n=n,   k=in,
//                                                               A=w lda=in, B=x ldb=in,
//                                                               C=y ldc=out)
//   backwardData  dx = dy w    <=>  dx^T = w^T dy^T = W DY  :  gemm(N, N, m=in,  n=n,   k=out,
//                                                               A=w lda=in, B=dy ldb=out,
//                                                               C=dx ldc=in)
//   backwardWts   dw = dy^T x  <=>  dw^T = x^T dy   = X DY^T:  gemm(N, T, m=in,  n=out, k=n,
//                                                               A=x lda=in, B=dy ldb=out,
//                                                               C=dw ldc=in)
//
// The bias is added after the product by addBiasRows, and its gradient (column sums of dy) comes
// from sumRows rather than a gemv against a vector of ones: no ones buffer to keep filled per batch
// size, the sum is written (not accumulated) as the interface requires, and it is one launch
// either way.
//
// Precision is chosen per call by the compute type: CUBLAS_COMPUTE_32F (plain float32, the CPU's
// results within rounding) or CUBLAS_COMPUTE_32F_FAST_TF32 under Precision::Tf32. Under
// Precision::Bf16 the inputs of each product are first rounded to bfloat16 in buffers made with
// the kernel (x and w in forward, dy and w in backwardData; backwardWeights reuses the x and dy
// rounded there, and rounds dy itself when the step had no backwardData: a model's first layer
// needs no input gradient), and the product reads them as CUDA_R_16BF
// with CUBLAS_COMPUTE_32F: float32 sums, float32 outputs, so nothing else changes. Unlike
// cublasSetMathMode this does not change the handle the other kernels share. It assumes that
// handle keeps CUBLAS_DEFAULT_MATH (a TF32 math mode would let COMPUTE_32F use TF32 too) and the
// default host pointer mode for alpha and beta; nothing in the backend changes either.

#include "core/backend/cuda/cuda_kernels.h"
#include "core/backend/cuda/cuda_ops.h"
#include "core/backend/cuda/cuda_runtime_types.h"

#include "core/base/check.h"

#include <climits>
#include <string>

namespace fb::cuda {
namespace {

// cublasGemmEx takes int sizes; a layer beyond them is the user's model, not a programming error.
int blasInt(int64_t v, const char *what)
{
    if (v > INT_MAX)
        throw DeviceError(std::string("cuBLAS cannot multiply with ") + what + " = " +
                          std::to_string(v) + " (its sizes are 32-bit)");
    return int(v);
}

class CublasLinear final : public LinearKernel {
public:
    CublasLinear(CudaContext &ctx, const LinearDesc &d)
        : m_ctx(ctx)
        , m_d(d)
        , m_n(blasInt(d.n, "batch size"))
        , m_in(blasInt(d.in, "input features"))
        , m_out(blasInt(d.out, "output features"))
        , m_bf16(ctx.bf16())
        , m_compute(ctx.tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F)
    {
        FB_ASSERT(d.n > 0 && d.in > 0 && d.out > 0, "empty linear layer");
        if (m_bf16) {
            m_xb = DeviceBuffer(*ctx.allocator, size_t(d.n * d.in) * sizeof(uint16_t));
            m_wb = DeviceBuffer(*ctx.allocator, size_t(d.out * d.in) * sizeof(uint16_t));
            m_dyb = DeviceBuffer(*ctx.allocator, size_t(d.n * d.out) * sizeof(uint16_t));
        }
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        m_dyRounded = false;
        gemm(CUBLAS_OP_T, CUBLAS_OP_N, m_out, m_n, m_in, in(w, m_wb, m_d.out * m_d.in), m_in,
             in(x, m_xb, m_d.n * m_d.in), m_in, y, m_out);
        if (m_d.bias) addBiasRows(y, b, m_d.n, m_d.out, m_ctx.stream);
    }

    void backwardData(const float *dy, const float *w, float *dx) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        gemm(CUBLAS_OP_N, CUBLAS_OP_N, m_in, m_n, m_out, in(w, m_wb, m_d.out * m_d.in), m_in,
             in(dy, m_dyb, m_d.n * m_d.out), m_out, dx, m_in);
        m_dyRounded = m_bf16;
    }

    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        // Under bf16, x and dy as rounded by the latest forward and backwardData.
        const void *xin = m_bf16 ? m_xb.data() : static_cast<const void *>(x);
        const void *dyin = m_dyRounded ? m_dyb.data() : in(dy, m_dyb, m_d.n * m_d.out);
        gemm(CUBLAS_OP_N, CUBLAS_OP_T, m_in, m_out, m_n, xin, m_in, dyin, m_out, dw, m_in);
        if (m_d.bias && db) sumRows(dy, db, m_d.n, m_d.out, m_ctx.stream);
    }

private:
    // A product's input as it reads it: the float32 tensor itself, or under bf16 its rounding
    // into `scratch`.
    const void *in(const float *t, const DeviceBuffer &scratch, int64_t count)
    {
        return productInput(m_bf16, t, scratch, count, m_ctx.stream);
    }

    // C = op(A) op(B), column-major, overwriting C (beta 0: C is never read, so garbage or NaN
    // in it does not leak through). A and B are float32, or bfloat16 under bf16; C is float32.
    void gemm(cublasOperation_t opA, cublasOperation_t opB, int m, int n, int k, const void *a,
              int lda, const void *b, int ldb, float *c, int ldc)
    {
        const float one = 1.0f, zero = 0.0f; // host scalars: CUBLAS_POINTER_MODE_HOST
        const cudaDataType_t inType = m_bf16 ? CUDA_R_16BF : CUDA_R_32F;
        FB_CUBLAS_CHECK(cublasGemmEx(m_ctx.cublas, opA, opB, m, n, k, &one, a, inType, lda, b,
                                     inType, ldb, &zero, c, CUDA_R_32F, ldc, m_compute,
                                     CUBLAS_GEMM_DEFAULT));
    }

    CudaContext &m_ctx;
    LinearDesc m_d;
    int m_n, m_in, m_out;
    // The precision the kernel was made with.
    bool m_bf16;
    cublasComputeType_t m_compute;
    DeviceBuffer m_xb, m_wb, m_dyb;
    bool m_dyRounded = false; // m_dyb holds this step's dy (a backwardData call rounded it)
};

} // namespace

std::unique_ptr<LinearKernel> makeLinear(CudaContext &ctx, const LinearDesc &d)
{
    return std::make_unique<CublasLinear>(ctx, d);
}

} // namespace fb::cuda
