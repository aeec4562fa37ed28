/* kernels.c: the hand-written C + OpenMP "limit" for bench/cpu.py.
 *
 * Each function is the loop an expert would write for the same computation as the
 * kiln kernel of the same name in bench/cpu.py: unit stride innermost, the parallel
 * loop outermost, `reduction(+:...)` for sums, private bins for the histogram, a
 * tiled transpose, i-k-j order for the matrix product.  bench/cpu.py compiles this
 * file once per run with `cc -O3 -march=native -fopenmp -fno-math-errno` into a
 * temporary shared object and calls it through ctypes.  Arrays are C-contiguous;
 * sizes are int64; scalars have the kernel's dtype.  Float32 kernels compute in
 * float32 (as kiln's NEP 50 rules do), float64 kernels in float64.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

/* glibc's <math.h> declares the vector versions of libm (libmvec) only under -ffast-math;
 * an expert who wants the loops with exp and log to vectorise without fast-math declares
 * them, as kiln's generated code does (src/emit/rt_cpu.h). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define VEC __attribute__((__simd__("notinbranch")))
extern float expf(float) VEC;
extern float logf(float) VEC;
extern double exp(double) VEC;
extern double log(double) VEC;
#endif

/* ---- Black-Scholes, float32 ------------------------------------------------------- */
static inline float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.3989422804014327f;
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float r = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - r : r;
}

void black_scholes(float *restrict call, float *restrict put, const float *restrict s,
                   const float *restrict x, const float *restrict t, float r, float v, i64 n) {
#pragma omp parallel for simd schedule(static)
    for (i64 i = 0; i < n; i++) {
        float sqrt_t = sqrtf(t[i]);
        float d1 = (logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float e = expf(-r * t[i]);
        float c1 = cnd(d1), c2 = cnd(d2);
        call[i] = s[i] * c1 - x[i] * e * c2;
        put[i] = x[i] * e * (1.0f - c2) - s[i] * (1.0f - c1);
    }
}

/* ---- elementwise -------------------------------------------------------------------- */
void saxpy(float *restrict out, const float *restrict x, const float *restrict y, float a, i64 n) {
#pragma omp parallel for simd schedule(static)
    for (i64 i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}

void chain6(double *restrict out, const double *restrict a, const double *restrict b,
            const double *restrict c, i64 n) {
#pragma omp parallel for simd schedule(static)
    for (i64 i = 0; i < n; i++) out[i] = ((a[i] * b[i] + c[i]) * a[i] - b[i]) / (c[i] + 1.0);
}

/* ---- stencils ------------------------------------------------------------------------ */
void stencil2d(double *restrict out, const double *restrict a, i64 n0, i64 n1) {
#pragma omp parallel for schedule(static)
    for (i64 i = 1; i < n0 - 1; i++) {
        const double *up = a + (i - 1) * n1, *mid = a + i * n1, *dn = a + (i + 1) * n1;
        double *o = out + i * n1;
#pragma omp simd
        for (i64 j = 1; j < n1 - 1; j++)
            o[j] = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]) - mid[j];
    }
}

void stencil3d(double *restrict out, const double *restrict a, i64 n0, i64 n1, i64 n2,
               double c0, double c1) {
    const i64 s0 = n1 * n2, s1 = n2;
#pragma omp parallel for collapse(2) schedule(static)
    for (i64 i = 1; i < n0 - 1; i++)
        for (i64 j = 1; j < n1 - 1; j++) {
            const double *p = a + i * s0 + j * s1;
            double *o = out + i * s0 + j * s1;
#pragma omp simd
            for (i64 k = 1; k < n2 - 1; k++)
                o[k] = c0 * p[k] + c1 * (p[k - s0] + p[k + s0] + p[k - s1] + p[k + s1] +
                                         p[k - 1] + p[k + 1]);
        }
}

/* ---- transpose: out (n1 x n0) = a (n0 x n1)^T, in TILE x TILE tiles that stay in L1 ---- */
enum { TILE = 32 };

void transpose(double *restrict out, const double *restrict a, i64 n0, i64 n1) {
#pragma omp parallel for collapse(2) schedule(static)
    for (i64 ib = 0; ib < n0; ib += TILE)
        for (i64 jb = 0; jb < n1; jb += TILE) {
            i64 ie = ib + TILE < n0 ? ib + TILE : n0, je = jb + TILE < n1 ? jb + TILE : n1;
            for (i64 j = jb; j < je; j++)
                for (i64 i = ib; i < ie; i++) out[j * n0 + i] = a[i * n1 + j];
        }
}

/* ---- reductions ----------------------------------------------------------------------- */
double sum(const double *restrict a, i64 n) {
    double s = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (i64 i = 0; i < n; i++) s += a[i];
    return s;
}

/* Bins of x[i] * nbins (x in [0, 1)), per-thread private counts merged at the end. */
void histogram(int32_t *restrict hist, const float *restrict x, i64 n, i64 nbins) {
    memset(hist, 0, (size_t)nbins * sizeof *hist);
#pragma omp parallel
    {
        int32_t *local = calloc((size_t)nbins, sizeof *local);
#pragma omp for schedule(static)
        for (i64 i = 0; i < n; i++) local[(i64)(x[i] * (float)nbins)]++;
#pragma omp critical
        for (i64 b = 0; b < nbins; b++) hist[b] += local[b];
        free(local);
    }
}

/* ---- matrix product C (n x m) = A (n x p) B (p x m), i-k-j order ------------------------- */
void matmul(double *restrict C, const double *restrict A, const double *restrict B, i64 n, i64 p,
            i64 m) {
#pragma omp parallel for schedule(static)
    for (i64 i = 0; i < n; i++) {
        double *c = C + i * m;
        for (i64 j = 0; j < m; j++) c[j] = 0.0;
        for (i64 k = 0; k < p; k++) {
            const double aik = A[i * p + k], *b = B + k * m;
#pragma omp simd
            for (i64 j = 0; j < m; j++) c[j] += aik * b[j];
        }
    }
}

/* ---- gather / scatter through a permutation ---------------------------------------------- */
void gather(double *restrict out, const double *restrict a, const i64 *restrict idx, i64 n) {
#pragma omp parallel for schedule(static)
    for (i64 i = 0; i < n; i++) out[i] = a[idx[i]];
}

void scatter(double *restrict out, const double *restrict a, const i64 *restrict idx, i64 n) {
#pragma omp parallel for schedule(static)
    for (i64 i = 0; i < n; i++) out[idx[i]] = a[i];
}

/* ---- Mandelbrot: rows handed out dynamically (the work per row varies) -------------------- */
void mandelbrot(int32_t *restrict out, i64 h, i64 w, double x0, double y0, double dx, double dy,
                i64 maxit) {
#pragma omp parallel for schedule(dynamic, 1)
    for (i64 i = 0; i < h; i++)
        for (i64 j = 0; j < w; j++) {
            double cr = x0 + j * dx, ci = y0 + i * dy, zr = 0.0, zi = 0.0;
            i64 n = 0;
            while (n < maxit && zr * zr + zi * zi <= 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                n++;
            }
            out[i * w + j] = (int32_t)n;
        }
}

/* ---- n-body: all-pairs accelerations, float64, softened ----------------------------------- */
void nbody(double *restrict ax, double *restrict ay, double *restrict az, const double *restrict x,
           const double *restrict y, const double *restrict z, const double *restrict m, i64 n,
           double eps2) {
#pragma omp parallel for schedule(static)
    for (i64 i = 0; i < n; i++) {
        double xi = x[i], yi = y[i], zi = z[i], sx = 0.0, sy = 0.0, sz = 0.0;
#pragma omp simd reduction(+ : sx, sy, sz)
        for (i64 j = 0; j < n; j++) {
            double ddx = x[j] - xi, ddy = y[j] - yi, ddz = z[j] - zi;
            double r2 = ddx * ddx + ddy * ddy + ddz * ddz + eps2;
            double s = m[j] / (r2 * sqrt(r2));
            sx += ddx * s;
            sy += ddy * s;
            sz += ddz * s;
        }
        ax[i] = sx;
        ay[i] = sy;
        az[i] = sz;
    }
}
