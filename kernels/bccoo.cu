// bccoo.cu — yaSpMV's BCCOO / BCCOO+ SpMV (Yan, Li, Zhang, Zhou, PPoPP'14), §3: the
// matrix-based segmented sum with adjacent synchronisation, in one kernel (plus the combine
// kernel of BCCOO+, §2.3). The format is built by the host (src/methods/bccoo/format.rs, which
// documents every array) or, for the fixed rule on a matrix kept on the device, by the kernels
// at the end of this file (src/methods/bccoo/device.rs); src/methods/bccoo/reference.rs runs
// the product's steps on the host.
//
// Work split (§3.2.1, Figure 8): the blocks are cut into workgroup-level tiles of
// WG x tile blocks, one per thread block, and each of those into thread-level tiles of
// `tile` consecutive blocks. A thread block takes its *logical* id from an atomic counter
// (§3.2.4: "workgroups can get such 'logic' workgroup ids from global memory using atomic
// fetch-and-add"), so that it only ever waits for a thread block that started before it and is
// therefore resident: no deadlock whatever order the hardware dispatches blocks in. The last
// logical block resets the counter for the next call (all ids have been taken by then).
//
// Each thread (§3.2.2, step 1): reads its bit-flag words (u8/u16/u32; one load per 8/16/32
// blocks), and for each block its column (u16, u32, or an i16 delta with -1 = read the u32
// array), bw values of x (read-only path, "texture memory": always on, §4) and bh x bw values
// (warp-transposed offline, so each load of a warp is 32 consecutive entries), and keeps a
// sequential segmented sum: at a row stop (flag 0) the sum is a block row's result — held in
// registers if it is the thread's first stop (the row may have started in earlier threads),
// emitted at once otherwise.
//   - strategy 1 (registers): the thread writes the result to y itself;
//   - strategy 2 (result cache): the result goes to a shared-memory cache of CACHE x WG
//     entries indexed from the workgroup's first result entry (§2.4), or to y past its end;
//     the cache is written to y coalesced at the end.
// (Strategy 1's intermediate_sums array of §3.2.2 would only hold these same results until
// the scan is done; we keep just the first, so Reg_size/ShM_size reduce to the tile size.)
//
// Step 2: the last partial sums (sum after the thread's last stop, or of its whole tile) go
// through a parallel segmented scan over the workgroup whose start flags are "my tile has a
// stop": a Hillis-Steele scan per warp with shuffles, the warp totals scanned by warp 0, then
// combined. It is skipped when the host marked every tile of the workgroup as having a stop
// (§2.4's check; the scan would be the identity).
//
// Step 3 (§3.2.4, adjacent synchronisation): a workgroup whose first block continues a block
// row of the previous one (WAIT) takes that workgroup's carry from Grp_sum; one whose last
// block does not end its block row (PUBLISH) publishes its own carry — at once if it has a row
// stop (the carry does not depend on the previous one), else after adding the carry it got.
// Hand-off: value stores, __threadfence(), then the flag (volatile); the reader spins on the
// volatile flag, __threadfence(), reads the value, and clears the flag (each flag is set once
// and cleared once per call, so the next call finds them all zero without any reset pass).
//
// Step 4: each thread's first stop adds the scanned sum of the threads before it (and the
// carry when no thread before it in the workgroup has a stop) and is emitted; strategy 2 then
// writes the cache to y.
//
// No float atomics, a fixed order for every addition: the product is bitwise reproducible run to
// run. BLAS semantics: y = alpha*A*x + beta*y; beta == 0 never reads y. Every row of y is
// written exactly once (an empty block row has one zero block, format.rs).
//
// Concurrency: the counter, flags and Grp_sum (and BCCOO+'s temporary buffer) are one slot of
// a small per-matrix ring; the host gives each call the next slot (src/methods/bccoo/cuda.rs),
// so products of one matrix running at the same time on different streams do not share them.
//
// Defines: BCCOO_BW (block width: 1, 2, 4) and BCCOO_BH (block height: 1..4): the register
// arrays of a block. The workgroup size WG is the launch's blockDim.x (64, 128, 256 or 512);
// the workgroup's arrays live in dynamic shared memory, laid out as
//   [last_partial_sums: BH x WG values][result cache: CACHE x WG values][open flags: WG bytes]
// (the host passes their size; CACHE = 0 for strategy 1). Everything else is the packed
// `config` launch argument: tile (bits 0-7, a multiple of 8), log2(flag word bits / 8) (8-9),
// column mode (10-11: 0 u16, 1 u32, 2 delta), strategy 2 (12), result cache multiple 1..4
// (13-15).

#ifndef BCCOO_BW
#define BCCOO_BW 1
#endif
#ifndef BCCOO_BH
#define BCCOO_BH 1
#endif

#if BCCOO_BW != 1 && BCCOO_BW != 2 && BCCOO_BW != 4
#error "BCCOO_BW must be 1, 2 or 4"
#endif
#if BCCOO_BH < 1 || BCCOO_BH > 4
#error "BCCOO_BH must be 1, 2, 3 or 4"
#endif
// The largest workgroup, and its warps (the warp totals of the scan are a static array).
#define BCCOO_MAX_WG 512
#define BCCOO_MAX_WARPS (BCCOO_MAX_WG / 32)
#define BCCOO_SKIP_SCAN 1
#define BCCOO_WAIT 2
#define BCCOO_PUBLISH 4
// Prefetch depth of step 1: the columns, x values and block values of BCCOO_PF blocks are all
// loaded before any is used, so every thread keeps that many blocks' loads in flight (the
// compiler did not hoist them over the row-stop stores on its own: lap3d7 -20% time,
// stencil27 -6%, elasticity -1%, H100). Fewer for larger blocks so the arrays stay in the
// 64 registers that __launch_bounds__(512, 2) allows (8 blocks with (512, 1) lost occupancy
// and was slower on the large matrices).
#define BCCOO_PF (BCCOO_BH * BCCOO_BW >= 8 ? 2 : (BCCOO_BH * BCCOO_BW >= 3 ? 4 : 8))

// bw consecutive values of one block row, in as few loads as the alignment allows (the host
// places each at a multiple of bw values).
template <typename T, int BW>
__device__ __forceinline__ void bccoo_load(const T *__restrict__ p, T (&v)[BW]) {
    if constexpr (BW == 1) {
        v[0] = __ldcs(p);
    } else if constexpr (sizeof(T) == 4 && BW == 2) {
        const float2 t = __ldcs(reinterpret_cast<const float2 *>(p));
        v[0] = t.x;
        v[1] = t.y;
    } else if constexpr (sizeof(T) == 4 && BW == 4) {
        const float4 t = __ldcs(reinterpret_cast<const float4 *>(p));
        v[0] = t.x;
        v[1] = t.y;
        v[2] = t.z;
        v[3] = t.w;
    } else {
#pragma unroll
        for (int k = 0; k < BW; k += 2) {
            const double2 t = __ldcs(reinterpret_cast<const double2 *>(p + k));
            v[k] = t.x;
            v[k + 1] = t.y;
        }
    }
}

// The matrix arrays (flags, columns, values) are read once per product: streaming loads
// (__ldcs, evict-first) keep them from pushing x out of L1/L2 (elasticity -7% time, H100).
// x and the first-result entries use the read-only path.

// Flag word i (8 << wlog bits).
__device__ __forceinline__ unsigned bccoo_word(const void *__restrict__ bits, int wlog,
                                               long long i) {
    if (wlog == 0) {
        return __ldcs(static_cast<const unsigned char *>(bits) + i);
    }
    if (wlog == 1) {
        return __ldcs(static_cast<const unsigned short *>(bits) + i);
    }
    return __ldcs(static_cast<const unsigned *>(bits) + i);
}

// The block column at stored position p; `prev` is the previous block's of the same tile.
__device__ __forceinline__ unsigned bccoo_col(const void *__restrict__ col,
                                              const unsigned *__restrict__ col_full, int mode,
                                              long long p, unsigned prev) {
    if (mode == 0) {
        return __ldcs(static_cast<const unsigned short *>(col) + p);
    }
    if (mode == 1) {
        return __ldcs(static_cast<const unsigned *>(col) + p);
    }
    // §2.2: the segmented difference as a short; -1 means "read the original array".
    const short d = __ldcs(static_cast<const short *>(col) + p);
    return d == -1 ? tessera_ro_load(col_full + p) : (unsigned)((int)prev + (int)d);
}

// out[r] = alpha*v + beta*out[r] for r < limit; beta == 0 does not read out[r].
template <typename T>
__device__ __forceinline__ void bccoo_out(T *out, long long limit, long long r, T v, T alpha,
                                          T beta) {
    if (r < limit) {
        out[r] = beta != T(0) ? alpha * v + beta * out[r] : alpha * v;
    }
}

// Block row k's result (bh rows): into the result cache when it fits (strategy 2), else to out.
template <typename T>
__device__ __forceinline__ void bccoo_emit(unsigned k, const T (&v)[BCCOO_BH], unsigned row0,
                                           int cap, T *cache, T *out, long long limit, T alpha,
                                           T beta) {
#pragma unroll
    for (int i = 0; i < BCCOO_BH; ++i) {
        const long long e = (long long)(k - row0) * BCCOO_BH + i;
        if (e < cap) {
            cache[e] = v[i];
        } else {
            bccoo_out(out, limit, (long long)k * BCCOO_BH + i, v[i], alpha, beta);
        }
    }
}

// Inclusive segmented scan over the 32 lanes of a warp (Hillis-Steele with shuffles): the
// operator is (a, fa) . (b, fb) = (fb ? b : a + b, fa | fb). Every lane must call it.
template <typename T>
__device__ __forceinline__ void bccoo_warp_scan(T (&s)[BCCOO_BH], bool &f, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T up[BCCOO_BH];
#pragma unroll
        for (int i = 0; i < BCCOO_BH; ++i) {
            up[i] = __shfl_up_sync(TESSERA_FULL_MASK, s[i], d);
        }
        const int fu = __shfl_up_sync(TESSERA_FULL_MASK, (int)f, d);
        if (lane >= d) {
            if (!f) {
#pragma unroll
                for (int i = 0; i < BCCOO_BH; ++i) {
                    s[i] = up[i] + s[i];
                }
            }
            f = f || fu != 0;
        }
    }
}

template <typename T>
__device__ __forceinline__ void
bccoo_spmv(const void *__restrict__ bits, const void *__restrict__ col,
           const unsigned *__restrict__ col_full, const T *__restrict__ values,
           const unsigned *__restrict__ res_entry, const unsigned char *__restrict__ wg_info,
           unsigned *sync, T *carry, const T *__restrict__ x, T *out, T alpha, T beta,
           long long limit, int cols, int config) {
    extern __shared__ __align__(16) unsigned char bccoo_smem[];
    __shared__ unsigned s_wg;
    __shared__ T s_wsum[BCCOO_BH][BCCOO_MAX_WARPS];
    __shared__ unsigned char s_wflag[BCCOO_MAX_WARPS];
    __shared__ T s_carry[BCCOO_BH];

    const int WG = blockDim.x;
    const int warps = WG >> 5;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int tile = config & 0xff;
    const int wlog = (config >> 8) & 3;
    const int wbits = 8 << wlog;
    const int mode = (config >> 10) & 3;
    const int cap = ((config >> 12) & 1) ? ((config >> 13) & 7) * WG : 0;
    // last_partial_sums (scanned in place): s_sum[i * WG + t]; the result cache; open flags
    // (no row stop in tiles 0..t of this workgroup).
    T *s_sum = reinterpret_cast<T *>(bccoo_smem);
    T *s_cache = s_sum + BCCOO_BH * WG;
    unsigned char *s_open = reinterpret_cast<unsigned char *>(s_cache + cap);

    // Logical workgroup id (§3.2.4); the last one resets the counter for the next call.
    if (tid == 0) {
        const unsigned id = atomicAdd(sync, 1u);
        if (id == gridDim.x - 1) {
            atomicExch(sync, 0u);
        }
        s_wg = id;
    }
    __syncthreads();
    const unsigned wg = s_wg;
    const long long t = (long long)wg * WG + tid;
    const long long gwarp = t >> 5;
    const long long padded = (long long)gridDim.x * WG * tile;
    const int words = (tile + wbits - 1) / wbits;
    const unsigned row0 = tessera_ro_load(res_entry + (long long)wg * WG);
    const unsigned row_first = tessera_ro_load(res_entry + t);

    // Step 1: the sequential segmented sum over this thread's tile.
    T acc[BCCOO_BH], first[BCCOO_BH];
#pragma unroll
    for (int i = 0; i < BCCOO_BH; ++i) {
        acc[i] = T(0);
        first[i] = T(0);
    }
    bool has_stop = false;
    unsigned row = row_first;
    unsigned word = 0, prev = 0;
    long long widx = gwarp * 32 * words + lane;
    long long p = gwarp * 32 * tile + lane;
    for (int jb = 0; jb < tile; jb += 8) {
        if ((jb & (wbits - 1)) == 0) {
            word = bccoo_word(bits, wlog, widx);
            widx += 32;
        }
        const unsigned chunk = word >> (jb & (wbits - 1));
        // BCCOO_PF blocks at a time: columns (the delta chain), x, values, then the sums.
#pragma unroll
        for (int j0 = 0; j0 < 8; j0 += BCCOO_PF) {
            unsigned cs[BCCOO_PF];
#pragma unroll
            for (int q = 0; q < BCCOO_PF; ++q) {
                cs[q] = bccoo_col(col, col_full, mode, p + 32 * q, prev);
                prev = cs[q];
            }
            T xv[BCCOO_PF][BCCOO_BW];
#pragma unroll
            for (int q = 0; q < BCCOO_PF; ++q) {
                const long long cc = (long long)cs[q] * BCCOO_BW;
#pragma unroll
                for (int k = 0; k < BCCOO_BW; ++k) {
                    xv[q][k] =
                        (BCCOO_BW == 1 || cc + k < cols) ? tessera_ro_load(x + cc + k) : T(0);
                }
            }
            T va[BCCOO_PF][BCCOO_BH][BCCOO_BW];
#pragma unroll
            for (int q = 0; q < BCCOO_PF; ++q) {
#pragma unroll
                for (int i = 0; i < BCCOO_BH; ++i) {
                    bccoo_load<T, BCCOO_BW>(
                        values + ((long long)i * padded + p + 32 * q) * BCCOO_BW, va[q][i]);
                }
            }
#pragma unroll
            for (int q = 0; q < BCCOO_PF; ++q) {
#pragma unroll
                for (int i = 0; i < BCCOO_BH; ++i) {
#pragma unroll
                    for (int k = 0; k < BCCOO_BW; ++k) {
                        acc[i] += va[q][i][k] * xv[q][k];
                    }
                }
                if (((chunk >> (j0 + q)) & 1u) == 0) { // row stop (§2.2: flag 0)
                    if (!has_stop) {
#pragma unroll
                        for (int i = 0; i < BCCOO_BH; ++i) {
                            first[i] = acc[i];
                        }
                        has_stop = true;
                    } else {
                        bccoo_emit<T>(row, acc, row0, cap, s_cache, out, limit, alpha, beta);
                    }
                    ++row;
#pragma unroll
                    for (int i = 0; i < BCCOO_BH; ++i) {
                        acc[i] = T(0);
                    }
                }
            }
            p += 32 * BCCOO_PF;
        }
    }

    // Step 2: segmented scan of the last partial sums (start flag: the tile has a stop).
    const unsigned char info = tessera_ro_load(wg_info + wg);
    T s[BCCOO_BH];
#pragma unroll
    for (int i = 0; i < BCCOO_BH; ++i) {
        s[i] = acc[i];
    }
    bool f = has_stop;
    if (!(info & BCCOO_SKIP_SCAN)) { // uniform over the workgroup
        bccoo_warp_scan<T>(s, f, lane);
        if (lane == 31) {
#pragma unroll
            for (int i = 0; i < BCCOO_BH; ++i) {
                s_wsum[i][warp] = s[i];
            }
            s_wflag[warp] = f;
        }
        __syncthreads();
        if (warp == 0) {
            T ws[BCCOO_BH];
            bool wf = false;
#pragma unroll
            for (int i = 0; i < BCCOO_BH; ++i) {
                ws[i] = lane < warps ? s_wsum[i][lane] : T(0);
            }
            if (lane < warps) {
                wf = s_wflag[lane] != 0;
            }
            bccoo_warp_scan<T>(ws, wf, lane);
            if (lane < warps) {
#pragma unroll
                for (int i = 0; i < BCCOO_BH; ++i) {
                    s_wsum[i][lane] = ws[i];
                }
                s_wflag[lane] = wf;
            }
        }
        __syncthreads();
        if (warp > 0) {
            if (!f) {
#pragma unroll
                for (int i = 0; i < BCCOO_BH; ++i) {
                    s[i] = s_wsum[i][warp - 1] + s[i];
                }
            }
            f = f || s_wflag[warp - 1] != 0;
        }
    }
#pragma unroll
    for (int i = 0; i < BCCOO_BH; ++i) {
        s_sum[i * WG + tid] = s[i];
    }
    s_open[tid] = !f;
    __syncthreads();

    // Step 3: adjacent synchronisation with the previous / next workgroup (§3.2.4).
    if (tid == 0) {
        volatile unsigned *flags = sync + 1;
        const bool open_all = s_open[WG - 1] != 0;
        T cin[BCCOO_BH];
#pragma unroll
        for (int i = 0; i < BCCOO_BH; ++i) {
            cin[i] = T(0);
        }
        if ((info & BCCOO_PUBLISH) && !open_all) {
            volatile T *cv = carry + (long long)wg * BCCOO_BH;
#pragma unroll
            for (int i = 0; i < BCCOO_BH; ++i) {
                cv[i] = s_sum[i * WG + WG - 1];
            }
            __threadfence();
            flags[wg] = 1u;
        }
        if (info & BCCOO_WAIT) {
            while (flags[wg - 1] == 0u) {
#if __CUDA_ARCH__ >= 700
                __nanosleep(32);
#endif
            }
            __threadfence();
            volatile const T *cv = carry + (long long)(wg - 1) * BCCOO_BH;
#pragma unroll
            for (int i = 0; i < BCCOO_BH; ++i) {
                cin[i] = cv[i];
            }
            flags[wg - 1] = 0u; // read once: cleared for the next call
        }
        if ((info & BCCOO_PUBLISH) && open_all) {
            volatile T *cv = carry + (long long)wg * BCCOO_BH;
#pragma unroll
            for (int i = 0; i < BCCOO_BH; ++i) {
                cv[i] = cin[i] + s_sum[i * WG + WG - 1];
            }
            __threadfence();
            flags[wg] = 1u;
        }
#pragma unroll
        for (int i = 0; i < BCCOO_BH; ++i) {
            s_carry[i] = cin[i];
        }
    }
    __syncthreads();

    // Step 4: the first stop of each tile gets the sums of the segment before it.
    if (has_stop) {
        T v[BCCOO_BH];
#pragma unroll
        for (int i = 0; i < BCCOO_BH; ++i) {
            const T pre = tid == 0           ? s_carry[i]
                          : s_open[tid - 1] ? s_carry[i] + s_sum[i * WG + tid - 1]
                                            : s_sum[i * WG + tid - 1];
            v[i] = pre + first[i];
        }
        bccoo_emit<T>(row_first, v, row0, cap, s_cache, out, limit, alpha, beta);
    }
    if (cap > 0) { // strategy 2: the result cache to y, coalesced (uniform branch)
        __syncthreads();
        const long long done =
            (long long)(tessera_ro_load(res_entry + (long long)(wg + 1) * WG) - row0) *
            BCCOO_BH;
        const long long n = done < cap ? done : cap;
        for (long long e = tid; e < n; e += WG) {
            bccoo_out(out, limit, (long long)row0 * BCCOO_BH + e, s_cache[e], alpha, beta);
        }
    }
}

// BCCOO+ (§2.3): y[r] = alpha * sum over slices of tmp[slice * stride + r] + beta*y[r].
template <typename T>
__device__ __forceinline__ void bccoo_combine(const T *__restrict__ tmp, long long stride,
                                              int slices, long long rows, T *y, T alpha,
                                              T beta) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += step) {
        T s = tmp[r];
        for (int k = 1; k < slices; ++k) {
            s += tmp[(long long)k * stride + r];
        }
        y[r] = beta != T(0) ? alpha * s + beta * y[r] : alpha * s;
    }
}

#define BCCOO_ENTRY(T, S)                                                                      \
    extern "C" __global__ void __launch_bounds__(BCCOO_MAX_WG, 2) bccoo_spmv_##S(              \
        const void *__restrict__ bits, const void *__restrict__ col,                           \
        const unsigned *__restrict__ col_full, const T *__restrict__ values,                   \
        const unsigned *__restrict__ res_entry, const unsigned char *__restrict__ wg_info,     \
        unsigned *sync, T *carry, const T *__restrict__ x, T *out, T alpha, T beta,            \
        long long limit, int cols, int config) {                                               \
        bccoo_spmv<T>(bits, col, col_full, values, res_entry, wg_info, sync, carry, x, out,    \
                      alpha, beta, limit, cols, config);                                       \
    }                                                                                          \
    extern "C" __global__ void bccoo_combine_##S(const T *__restrict__ tmp, long long stride,  \
                                                 int slices, long long rows, T *y, T alpha,    \
                                                 T beta) {                                     \
        bccoo_combine<T>(tmp, stride, slices, rows, y, alpha, beta);                           \
    }
TESSERA_INSTANTIATE(BCCOO_ENTRY)

// ---------------------------------------------------------------------------------------------
// The format built on the device (src/methods/bccoo/device.rs): the arrays format.rs builds on
// the host for one slice (BCCOO, not BCCOO+), from tessera's int32 CSR (sorted rows,
// duplicates kept). The shape is a launch argument here (bh <= 4 rows, bw = 1 << shift), so
// these kernels are compiled once, in the 1x1 specialisation, which the build loads whatever
// shape it builds.
//   bccoo_facts:       the sampled block counts of every shape and the 1x1 column jumps that a
//                      short delta cannot hold (format/facts.rs, same samples, same counts);
//   bccoo_block_count: blocks per block row (format/blocking.rs's merge, duplicates opening a
//                      new block at the same column; an empty block row has one block), and
//                      each entry's block within its block row (a warp per block row);
//   (the counts scanned into each block row's first block: backend/cuda/scan.rs)
//   bccoo_tiles:       one thread per thread tile, one block per workgroup: bit-flag words,
//                      first-result entry, and the workgroup's flags (skip the scan, wait,
//                      publish);
//   bccoo_fill_<T>:    one block per warp group of thread tiles, whose blocks are stored
//                      together: values, columns (or deltas) and value map, staged in shared
//                      memory and written out coalesced.
#if BCCOO_BW == 1 && BCCOO_BH == 1

#define BCCOO_BUILD_THREADS 256

// Sum over the block and one atomic per block into *out (every thread calls; the leading
// barrier keeps a previous call's read of the sum apart from this call's reset).
__device__ __forceinline__ void bccoo_block_add(unsigned long long v, unsigned long long *out) {
    __shared__ unsigned long long s_sum;
    __syncthreads();
    if (threadIdx.x == 0) s_sum = 0;
    __syncthreads();
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(TESSERA_FULL_MASK, v, o);
    if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(&s_sum, v);
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned long long total = s_sum;
        if (total != 0) atomicAdd(out, total);
    }
}

#define BCCOO_BUILD_WARPS (BCCOO_BUILD_THREADS / 32)

// out[3 * (bh - 1) + w]: blocks of bh x (1 << w) among the sampled block rows of height bh
// (the grid's 4 x bph blocks: bph per height, a warp per sampled block row br = s * stride, s =
// 0, 1, ...); out[12]: column jumps between consecutive 1x1 entries of the sampled rows (into
// the next row too), out[13]: those a short delta cannot hold. `out` zeroed by the caller.
// The blocks of a block row are its distinct block columns (format/facts.rs, duplicates
// ignored), counted an entry per lane: an entry counts for width 1 << w when it is the first
// of its block column in its row and no earlier row of the block row has that block column (a
// binary search in each, shared by the three widths). An empty block row counts one block.
extern "C" __global__ void __launch_bounds__(BCCOO_BUILD_THREADS)
    bccoo_facts(int rows, long long stride, long long bph, const int *__restrict__ rp,
                const int *__restrict__ ci, unsigned long long *out) {
    const int bh = (int)(blockIdx.x / bph) + 1;
    const long long nbr = (rows + bh - 1) / bh;
    const long long sampled = (nbr + stride - 1) / stride;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    unsigned long long cnt[3] = {0, 0, 0}, jumps = 0, far = 0;
    for (long long s = (long long)(blockIdx.x % bph) * BCCOO_BUILD_WARPS + warp; s < sampled;
         s += bph * BCCOO_BUILD_WARPS) {
        const int r0 = (int)(s * stride * bh);
        const int h = min(bh, rows - r0);
        int rs[5];
#pragma unroll
        for (int i = 0; i < 5; ++i) rs[i] = rp[r0 + min(i, h)];
        const int k0 = rs[0], k1 = rs[4];
        if (k0 == k1) {
            if (lane == 0) ++cnt[0], ++cnt[1], ++cnt[2];
            continue;
        }
        // bh = 1: pairs (k, k + 1) up to the next row's first entry, if it has one.
        const int k2 = (bh == 1 && r0 + 1 < rows && rp[r0 + 2] > k1) ? k1 + 1 : k1;
        for (int k = k0 + lane; k < k1; k += 32) {
            int i = 0;
#pragma unroll
            for (int q = 1; q < 4; ++q) i += (q < h && rs[q] <= k) ? 1 : 0;
            const unsigned c = (unsigned)ci[k];
            const unsigned before = k > rs[i] ? (unsigned)ci[k - 1] : 0xffffffffu;
            if (bh == 1 && k + 1 < k2) {
                const long long d = (long long)ci[k + 1] - (long long)c;
                ++jumps;
                if (d == -1 || d < -32767 || d > 32767) ++far;
            }
            // Width 1 << w counts the entry unless the row's previous entry or an earlier
            // row has its block column: in row q, the first column >= (c >> w) << w, found
            // for w = 2 by a binary search and for w = 1 and 0 by stepping on from there
            // (their targets are no smaller; the steps cross only columns of c's width-4
            // block column).
            bool seen[3];
#pragma unroll
            for (int w = 0; w < 3; ++w) seen[w] = before != 0xffffffffu && (before >> w) == (c >> w);
            for (int q = 0; q < i && !(seen[0] && seen[1] && seen[2]); ++q) {
                const unsigned t2 = (c >> 2) << 2, t1 = (c >> 1) << 1;
                const int e = rs[q + 1];
                int lo = rs[q], hi = e;
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if ((unsigned)ci[mid] < t2) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                seen[2] = seen[2] || (lo < e && ((unsigned)ci[lo] >> 2) == (c >> 2));
                while (lo < e && (unsigned)ci[lo] < t1) ++lo;
                seen[1] = seen[1] || (lo < e && ((unsigned)ci[lo] >> 1) == (c >> 1));
                while (lo < e && (unsigned)ci[lo] < c) ++lo;
                seen[0] = seen[0] || (lo < e && (unsigned)ci[lo] == c);
            }
#pragma unroll
            for (int w = 0; w < 3; ++w) cnt[w] += seen[w] ? 0 : 1;
        }
    }
    unsigned long long *o = out + 3 * (bh - 1);
    bccoo_block_add(cnt[0], o);
    bccoo_block_add(cnt[1], o + 1);
    bccoo_block_add(cnt[2], o + 2);
    if (bh == 1) {
        bccoo_block_add(jumps, out + 12);
        bccoo_block_add(far, out + 13);
    }
}

// The blocks of block row br (rows r0 .. r0 + h), in format/blocking.rs's order: each step
// opens one block at the smallest block column among the rows' next entries and takes every
// row's entries in that column (a duplicate of an entry already in the block ends that row's
// share). Calls on_entry(k, n) for each entry k of the block row's n-th block (from 0), and
// returns the number of blocks (0 for an empty block row).
template <typename OnEntry>
__device__ __forceinline__ unsigned bccoo_walk(const int *__restrict__ rp,
                                               const int *__restrict__ ci, int r0, int h,
                                               int shift, OnEntry on_entry) {
    const unsigned mask = (1u << shift) - 1u;
    int head[4], end[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        head[i] = i < h ? rp[r0 + i] : 0;
        end[i] = i < h ? rp[r0 + i + 1] : 0;
    }
    unsigned n = 0;
    for (;;) {
        unsigned bc = 0xffffffffu;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (head[i] < end[i]) bc = min(bc, (unsigned)ci[head[i]] >> shift);
        }
        if (bc == 0xffffffffu) break;
        unsigned occ = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            while (head[i] < end[i]) {
                const unsigned c = (unsigned)ci[head[i]];
                const unsigned pos = ((unsigned)i << shift) + (c & mask);
                if ((c >> shift) != bc || (occ >> pos) & 1u) break;
                occ |= 1u << pos;
                on_entry(head[i], n);
                ++head[i];
            }
        }
        ++n;
    }
    return n;
}

// How many keys of the warp's window (a sorted key per lane; a lane without one holds ~0u,
// above every key) are below x, and whether x is among them (`present`). Every lane calls, each
// with its own x.
__device__ __forceinline__ int bccoo_window_rank(unsigned key, unsigned x, bool &present) {
    int pos = 0;
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        if (__shfl_sync(TESSERA_FULL_MASK, key, pos + s - 1) < x) pos += s;
    }
    const unsigned at = __shfl_sync(TESSERA_FULL_MASK, key, pos);
    present = at == x;
    return at < x ? 32 : pos;
}

// count[br] = blocks of block row br (at least 1), br < nbr = ceil(rows / bh), and lid[k] = the
// block of its block row that entry k falls in (non-decreasing along each row): a warp per block
// row, grid-stride. Without a repeated column in a row, bccoo_walk's blocks are the distinct
// block columns of the block row's rows in ascending order, so an entry's block is the number of
// distinct block columns below its own. The warp reads 32 entries of each row at a time (a
// window); the block columns below `lim` (the smallest last block column of a window that does
// not reach its row's end) are then all in the windows, and are taken: an entry is new when it
// is the first of its block column in its row's window and no earlier row's window holds that
// block column, and its block is the blocks before the round plus the new entries below its
// block column, counted in every window (in its own from the ballot of its row's first entries,
// in the others by a binary search by shuffles). Reads and writes are coalesced. A block row
// with a repeated column (a duplicate, which opens a second block at the same block column) is
// walked by its warp's first lane instead (bccoo_walk). The earlier thread per block row, whose
// lanes read 32 rows at once, read 8 times the bytes it used. BH: the block height, a template
// parameter so that every per-row array stays in registers; rows past the matrix's last are
// empty.
template <int BH>
__device__ __forceinline__ void bccoo_count_warp(int rows, int shift, long long nbr,
                                                 const int *__restrict__ rp,
                                                 const int *__restrict__ ci, unsigned *count,
                                                 unsigned *lid) {
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
    const long long step = (long long)gridDim.x * BCCOO_BUILD_WARPS;
    for (long long br = (long long)blockIdx.x * BCCOO_BUILD_WARPS + (threadIdx.x >> 5); br < nbr;
         br += step) {
        const int r0 = (int)(br * BH);
        const int h = min(BH, rows - r0);  // warp-uniform, like every row bound below
        int head[BH], end[BH];
        unsigned last[BH];  // the column of each row's last entry taken (~0u: none yet)
        bool more = false;
#pragma unroll
        for (int i = 0; i < BH; ++i) {
            head[i] = i < h ? rp[r0 + i] : 0;
            end[i] = i < h ? rp[r0 + i + 1] : 0;
            last[i] = 0xffffffffu;
            more |= head[i] < end[i];
        }
        unsigned base = 0;  // blocks of the rounds before
        bool walk = false;
        while (more) {
            unsigned c[BH], key[BH], taken[BH], first[BH], news[BH];
            unsigned lim = 0xffffffffu, any = 0;
            bool repeat = false;
#pragma unroll
            for (int i = 0; i < BH; ++i) {
                const int k = head[i] + lane;
                c[i] = k < end[i] ? (unsigned)ci[k] : 0xffffffffu;
                const unsigned up = __shfl_up_sync(TESSERA_FULL_MASK, c[i], 1);
                repeat |= k < end[i] && c[i] == (lane == 0 ? last[i] : up);
                const unsigned tail = __shfl_sync(TESSERA_FULL_MASK, c[i], 31);
                if (end[i] - head[i] > 32) lim = min(lim, tail >> shift);
            }
            // Columns are below 2^31, so a taken key is below ~0u.
#pragma unroll
            for (int i = 0; i < BH; ++i) {
                key[i] = c[i] != 0xffffffffu && (c[i] >> shift) < lim ? c[i] >> shift : 0xffffffffu;
                taken[i] = __ballot_sync(TESSERA_FULL_MASK, key[i] != 0xffffffffu);
                any |= taken[i];
                const unsigned up = __shfl_up_sync(TESSERA_FULL_MASK, key[i], 1);
                first[i] = __ballot_sync(TESSERA_FULL_MASK,
                                         key[i] != 0xffffffffu && (lane == 0 || up != key[i]));
            }
            // Never without a repeat (a window that stops short of its row's end holds at least
            // 8 block columns, and its first is below lim); the walk keeps a surprise correct.
            if (__any_sync(TESSERA_FULL_MASK, repeat) || any == 0) {
                walk = true;
                break;
            }
            // pos[i][q]: the entries of row q's window below lane's key of row i, and whether
            // that key is there (q != i).
            int pos[BH][BH];
            bool present[BH][BH];
#pragma unroll
            for (int i = 0; i < BH; ++i) {
#pragma unroll
                for (int q = 0; q < BH; ++q) {
                    if (q != i) pos[i][q] = bccoo_window_rank(key[q], key[i], present[i][q]);
                }
            }
#pragma unroll
            for (int i = 0; i < BH; ++i) {
                bool isnew = (first[i] >> lane) & 1u;
#pragma unroll
                for (int p = 0; p < i; ++p) isnew = isnew && !present[i][p];
                news[i] = __ballot_sync(TESSERA_FULL_MASK, isnew);
            }
#pragma unroll
            for (int i = 0; i < BH; ++i) {
                // The first entry of this lane's block column in its own window.
                const unsigned mine = first[i] & (below | (1u << lane));
                const int g = mine != 0 ? 31 - __clz(mine) : 0;
                unsigned b = base + __popc(news[i] & ((1u << g) - 1u));
#pragma unroll
                for (int q = 0; q < BH; ++q) {
                    if (q != i) {
                        b += __popc(pos[i][q] >= 32 ? news[q]
                                                    : news[q] & ((1u << pos[i][q]) - 1u));
                    }
                }
                if (key[i] != 0xffffffffu) lid[head[i] + lane] = b;
            }
            more = false;
#pragma unroll
            for (int i = 0; i < BH; ++i) {
                base += __popc(news[i]);
                const int t = __popc(taken[i]);
                if (t > 0) last[i] = __shfl_sync(TESSERA_FULL_MASK, c[i], t - 1);
                head[i] += t;
                more |= head[i] < end[i];
            }
        }
        if (walk) {
            if (lane == 0) {
                const unsigned n = bccoo_walk(rp, ci, r0, h, shift,
                                              [&](int k, unsigned b) { lid[k] = b; });
                count[br] = n > 0 ? n : 1u;
            }
        } else if (lane == 0) {
            count[br] = base > 0 ? base : 1u;
        }
        __syncwarp();
    }
}

extern "C" __global__ void __launch_bounds__(BCCOO_BUILD_THREADS)
    bccoo_block_count(int rows, int bh, int shift, long long nbr, const int *__restrict__ rp,
                      const int *__restrict__ ci, unsigned *count, unsigned *lid) {
    switch (bh) {
    case 1:
        bccoo_count_warp<1>(rows, shift, nbr, rp, ci, count, lid);
        break;
    case 2:
        bccoo_count_warp<2>(rows, shift, nbr, rp, ci, count, lid);
        break;
    case 3:
        bccoo_count_warp<3>(rows, shift, nbr, rp, ci, count, lid);
        break;
    default:
        bccoo_count_warp<4>(rows, shift, nbr, rp, ci, count, lid);
        break;
    }
}

// First k in [lo, hi) with lid[k] >= v (lid non-decreasing there), else hi.
__device__ __forceinline__ long long bccoo_first_at_least(const unsigned *__restrict__ lid,
                                                         long long lo, long long hi,
                                                         unsigned long long v) {
    while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if ((unsigned long long)lid[mid] < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The first i in [0, nbr) with ends[i + 1] > b: the block row holding block b (ends = the
// scanned counts, ends[nbr] = blocks), or nbr.
__device__ __forceinline__ long long bccoo_row_of_block(const unsigned *__restrict__ ends,
                                                       long long nbr, unsigned long long b) {
    long long lo = 0, hi = nbr;
    while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if ((unsigned long long)ends[mid + 1] <= b) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// r / bh for the heights the format takes (1 to 4): shifts, and a division by the constant 3.
__device__ __forceinline__ int bccoo_div_bh(int r, int bh) {
    return bh == 3 ? r / 3 : r >> (bh >> 1);
}

// One block per warp group g: the 32 thread tiles g * 32 .. g * 32 + 31, whose blocks
// [B0, B0 + 32 tile) are stored together (the warp-wide transpose: block j of tile t at
// (t / 32) * 32 * tile + j * 32 + t % 32, a contiguous range per value array). The block stages
// them in shared memory, `js` block positions j per lane at a time (js * 32 blocks: the host
// sizes js to the shared memory), zeroed: each entry of the block rows overlapping the range
// goes to its block's staged values, its block column to the staged columns, and its place in
// `values` to value_slot; then the stage is written out coalesced: values, and the columns as
// u16 / u32 (col_mode 0 / 1) or, in delta mode (2), full and the segmented differences
// (format/arrays.rs: the first block of a tile, a true -1 and a difference beyond a short are
// escapes, counted into *escapes). Padding blocks (b >= blocks) and empty block rows' blocks
// come out as zero values at column 0.
//
// The entries: the block rows of B0 and B1 - 1 come from res_entry (bccoo_tiles, run before:
// the block row of each thread tile's first block); the first and last block rows' rows are
// narrowed to the entries whose blocks fall in the range by a binary search of lid each, one
// lane of the first warp per bound; the rows between are taken whole. An entry's row is known
// from its range for the narrowed ones and found by a binary search of rp for the rest. The
// stage puts a gap after every 32 block positions (33 per j), so that the consecutive blocks
// of a row (32 positions apart) fall in different banks.
template <typename T>
__device__ __forceinline__ void bccoo_fill(int rows, int bh, int shift, int tile, int js,
                                           long long nbr, long long blocks, long long padded,
                                           int col_mode, const int *__restrict__ rp,
                                           const int *__restrict__ ci,
                                           const T *__restrict__ va,
                                           const unsigned *__restrict__ start,
                                           const unsigned *__restrict__ lid,
                                           const unsigned *__restrict__ res_entry, void *col,
                                           unsigned *full, T *values, unsigned *value_slot,
                                           unsigned long long *escapes) {
    extern __shared__ __align__(16) unsigned char bccoo_stage[];
    // Up to 9 entry ranges: the rows between the first and last block rows (s_row -1: found
    // by a search of rp in [s_mlo, s_mhi)), 4 rows of the first block row, 4 of the last.
    __shared__ int s_rs[9], s_re[9], s_row[9];
    __shared__ int s_nr, s_mlo, s_mhi;
    const int bw = 1 << shift;
    const unsigned mask = (unsigned)bw - 1u;
    const unsigned long long g = blockIdx.x;
    const unsigned long long B0 = g * 32ull * (unsigned)tile;
    const unsigned long long B1 = min(B0 + 32ull * (unsigned)tile, (unsigned long long)blocks);
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        long long lo = 0, hi = -1;
        if (B0 < B1) {
            // res_entry[t] is the block row of block t * tile (nbr past the last block), and
            // every block row has a block: B1 - 1 is in the block row of B1 or the one before.
            lo = res_entry[32 * g];
            const long long r = res_entry[32 * g + 32];
            hi = r >= nbr ? nbr - 1 : ((unsigned long long)start[r] < B1 ? r : r - 1);
        }
        // Lane e * 8 + i * 2 + w (lanes 0-15): the bound w (0: from, 1: to) of row i of the
        // first (e = 0) or last (e = 1) block row.
        const int e = lane >> 3, i = (lane >> 1) & 3, w = lane & 1;
        int bound = 0;
        bool has = false;
        if (lane < 16 && B0 < B1 && i < bh && (e == 0 || hi > lo)) {
            const long long br = e == 0 ? lo : hi;
            const int r = (int)(br * bh) + i;
            if (r < rows) {
                const unsigned long long s0 = start[br];
                const unsigned long long v = w == 0 ? (B0 > s0 ? B0 - s0 : 0ull) : B1 - s0;
                bound = (int)bccoo_first_at_least(lid, rp[r], rp[r + 1], v);
                has = true;
            }
        }
        // The rows between first (most entries find their range at its first test), then
        // the narrowed ones.
        const bool mid = hi > lo + 1 && rp[hi * bh] > rp[(lo + 1) * bh];
        int nr = mid ? 1 : 0;
#pragma unroll
        for (int q = 0; q < 16; q += 2) {
            const int k0 = __shfl_sync(TESSERA_FULL_MASK, bound, q);
            const int k1 = __shfl_sync(TESSERA_FULL_MASK, bound, q + 1);
            const bool h2 = __shfl_sync(TESSERA_FULL_MASK, has, q);
            if (h2 && k1 > k0) {
                if (lane == 0) {
                    s_rs[nr] = k0;
                    s_re[nr] = k1;
                    s_row[nr] = (int)((q >> 3 == 0 ? lo : hi) * bh) + ((q >> 1) & 3);
                }
                ++nr;
            }
        }
        if (lane == 0) {
            s_mlo = (int)((lo + 1) * bh);
            s_mhi = (int)min(hi * bh, (long long)rows);
            if (mid) {
                s_rs[0] = rp[(lo + 1) * bh];
                s_re[0] = rp[hi * bh];
                s_row[0] = -1;
            }
            s_nr = nr;
        }
    }
    __syncthreads();
    const int nr = s_nr, mlo = s_mlo, mhi = s_mhi;
    int total = 0;
    for (int q = 0; q < nr; ++q) total += s_re[q] - s_rs[q];
    T *sv = (T *)bccoo_stage;
    unsigned *sc = (unsigned *)(sv + 33 * js * bh * bw);
    const unsigned long long base = B0;  // stored position of B0
    const unsigned utile = (unsigned)tile;
    const int lane = threadIdx.x;
    unsigned prev = 0;  // delta mode: lane < 32's last column, across the slices
    unsigned long long esc = 0;
    for (int j0 = 0; j0 < tile; j0 += js) {
        const int jn = min(js, tile - j0);
        const int nv = 33 * jn * bh * bw, nc = 33 * jn;
        for (int q = threadIdx.x; q < nv; q += blockDim.x) sv[q] = T(0);
        for (int q = threadIdx.x; q < nc; q += blockDim.x) sc[q] = 0u;
        __syncthreads();
        for (int x = threadIdx.x; x < total; x += blockDim.x) {
            int k = x, q = 0;
            while (k >= s_re[q] - s_rs[q]) k -= s_re[q] - s_rs[q], ++q;
            k += s_rs[q];
            int r = s_row[q];
            if (r < 0) {
                // The row of entry k: the last r in [mlo, mhi) with rp[r] <= k.
                int a = mlo, z = mhi - 1;
                while (a < z) {
                    const int mid = (a + z + 1) >> 1;
                    if (rp[mid] <= k) {
                        a = mid;
                    } else {
                        z = mid - 1;
                    }
                }
                r = a;
            }
            const int br = bccoo_div_bh(r, bh), i = r - br * bh;
            const unsigned long long b = (unsigned long long)start[br] + lid[k];
            if (b < B0 || b >= B1) continue;
            const unsigned lb = (unsigned)(b - B0);  // < 32 * tile
            const unsigned t = lb / utile, j = lb - t * utile;
            if ((int)j < j0 || (int)j >= j0 + jn) continue;
            const int lp = ((int)j - j0) * 33 + (int)t;
            const unsigned c = (unsigned)ci[k];
            sv[((i * 33 * jn + lp) << shift) + (c & mask)] = va[k];
            sc[lp] = c >> shift;  // every entry of the block writes the same column
            value_slot[k] = (unsigned)((((unsigned long long)i * padded + base + j * 32ull + t)
                                        << shift) + (c & mask));
        }
        __syncthreads();
        const unsigned long long p0 = base + 32ull * j0;  // stored position of this slice
        const int per = 32 * jn * bw;                     // values per row of the slice
        for (int i = 0; i < bh; ++i) {
            T *dst = values + (((unsigned long long)i * padded + p0) << shift);
            const T *src = sv + i * 33 * jn * bw;
            for (int q = threadIdx.x; q < per; q += blockDim.x) {
                const int lp = q >> shift;
                dst[q] = src[((lp + (lp >> 5)) << shift) + (q & (int)mask)];
            }
        }
        if (col_mode == 0) {
            for (int q = threadIdx.x; q < 32 * jn; q += blockDim.x)
                ((unsigned short *)col)[p0 + q] = (unsigned short)sc[q + (q >> 5)];
        } else if (col_mode == 1) {
            for (int q = threadIdx.x; q < 32 * jn; q += blockDim.x)
                ((unsigned *)col)[p0 + q] = sc[q + (q >> 5)];
        } else if (lane < 32) {
            for (int jj = 0; jj < jn; ++jj) {
                const unsigned c = sc[jj * 33 + lane];
                const unsigned long long p = p0 + jj * 32ull + lane;
                full[p] = c;
                const long long d = (long long)c - (long long)prev;
                short v;
                if (j0 + jj == 0) {
                    v = -1;
                } else if (d == -1 || d < -32767 || d > 32767) {
                    v = -1;
                    ++esc;
                } else {
                    v = (short)d;
                }
                ((short *)col)[p] = v;
                prev = c;
            }
        }
        __syncthreads();
    }
    bccoo_block_add(esc, escapes);
}

// Thread t = blockIdx.x * wg + threadIdx.x of the format (blockDim.x = wg, gridDim.x = the
// workgroups): its first-result entry (the block rows ending before its tile) and its bit-flag
// words (0 at each row stop, 1 elsewhere and in the padding); thread 0 of each block writes its
// workgroup's flags (Bccoo::wg_info: every tile has a stop; its last block continues into the
// next workgroup: publish; the previous one's did: wait). ends: the scanned counts.
extern "C" __global__ void __launch_bounds__(BCCOO_MAX_WG)
    bccoo_tiles(int tile, int word_bits, long long blocks, long long nbr,
                const unsigned *__restrict__ ends, unsigned char *bits, unsigned *res_entry,
                unsigned char *wg_info) {
    const int wg = blockDim.x;
    const long long nwg = gridDim.x;
    const long long t = (long long)blockIdx.x * wg + threadIdx.x;
    const long long threads = nwg * wg;
    const unsigned long long b0 = (unsigned long long)t * tile;
    long long e = bccoo_row_of_block(ends, nbr, b0);
    const long long first = e;
    res_entry[t] = (unsigned)first;
    if (t == threads - 1) res_entry[threads] = (unsigned)nbr;
    const int words = (tile + word_bits - 1) / word_bits;
    const int wbytes = word_bits / 8;
    const unsigned all = word_bits == 32 ? 0xffffffffu : (1u << word_bits) - 1u;
    unsigned word = all;
    for (int j = 0; j < tile; ++j) {
        if (e < nbr && (unsigned long long)ends[e + 1] - 1ull == b0 + j) {
            word &= ~(1u << (j % word_bits));
            ++e;
        }
        if ((j + 1) % word_bits == 0 || j + 1 == tile) {
            const unsigned long long wi = ((unsigned long long)t >> 5) * 32ull * words +
                                          (j / word_bits) * 32ull + ((unsigned long long)t & 31ull);
            if (wbytes == 1) {
                bits[wi] = (unsigned char)word;
            } else if (wbytes == 2) {
                ((unsigned short *)bits)[wi] = (unsigned short)word;
            } else {
                ((unsigned *)bits)[wi] = word;
            }
            word = all;
        }
    }
    const int all_stop = __syncthreads_and(e > first);
    if (threadIdx.x == 0) {
        auto publishes = [&](long long w) {
            const unsigned long long last = (unsigned long long)(w + 1) * wg * tile - 1ull;
            if (w + 1 >= nwg || (long long)last >= blocks) return false;
            const long long i = bccoo_row_of_block(ends, nbr, last);
            return !(i < nbr && (unsigned long long)ends[i + 1] - 1ull == last);
        };
        const long long w = blockIdx.x;
        unsigned char f = all_stop ? BCCOO_SKIP_SCAN : 0;
        if (w > 0 && publishes(w - 1)) f |= BCCOO_WAIT;
        if (publishes(w)) f |= BCCOO_PUBLISH;
        wg_info[w] = f;
    }
}

#define BCCOO_BUILD_ENTRY(T, S)                                                                \
    extern "C" __global__ void __launch_bounds__(BCCOO_BUILD_THREADS) bccoo_fill_##S(          \
        int rows, int bh, int shift, int tile, int js, long long nbr, long long blocks,        \
        long long padded, int col_mode, const int *__restrict__ rp,                            \
        const int *__restrict__ ci, const T *__restrict__ va,                                  \
        const unsigned *__restrict__ start, const unsigned *__restrict__ lid,                  \
        const unsigned *__restrict__ res_entry, void *col, unsigned *full, T *values,          \
        unsigned *value_slot, unsigned long long *escapes) {                                   \
        bccoo_fill<T>(rows, bh, shift, tile, js, nbr, blocks, padded, col_mode, rp, ci, va,    \
                      start, lid, res_entry, col, full, values, value_slot, escapes);          \
    }
TESSERA_INSTANTIATE(BCCOO_BUILD_ENTRY)

#endif  // BCCOO_BW == 1 && BCCOO_BH == 1
