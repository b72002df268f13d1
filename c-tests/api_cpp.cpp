// api_cpp.cpp: tessera.h from C++17 (included twice), compiled with
// -std=c++17 -Wall -Wextra -Wpedantic -Werror, linked against libtessera.so: a small product on
// the host backend, checked against hand values.
#include "tessera.h"
#include "tessera.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

static_assert(TESSERA_STATUS_SUCCESS == 0, "status numbers are part of the API");
static_assert(TESSERA_STATUS_INVALID_HANDLE == 100, "status numbers are part of the API");
static_assert(sizeof(tessera_status) == 4, "tessera_status is int32_t");

namespace {

int checks = 0;
int failures = 0;

void check(bool ok, const std::string &what) {
    ++checks;
    if (!ok) {
        ++failures;
        std::fprintf(stderr, "FAIL: %s (last error: %s)\n", what.c_str(), tessera_last_error());
    }
}

// RAII owners, the way a C++ application would wrap the handles.
struct HandleDeleter {
    void operator()(tessera_handle_s *h) const { tessera_destroy(h); }
};
struct MatrixDeleter {
    void operator()(tessera_matrix_s *A) const { tessera_destroy_matrix(A); }
};
using Handle = std::unique_ptr<tessera_handle_s, HandleDeleter>;
using Matrix = std::unique_ptr<tessera_matrix_s, MatrixDeleter>;

template <typename T>
void product(tessera_handle h, tessera_value_type vt, tessera_index_base base) {
    // A = [1 0 2; 0 3 0; 4 0 5] (3x3), x = [1 2 3]: A x = [7 6 19], A^T x = [13 6 17]
    std::vector<std::int64_t> row_ptr{0, 2, 3, 5};
    std::vector<std::int64_t> col_ind{0, 2, 1, 0, 2};
    for (auto &r : row_ptr) r += base;
    for (auto &c : col_ind) c += base;
    std::vector<T> values{1, 2, 3, 4, 5};
    const std::vector<T> x{1, 2, 3};
    const std::vector<T> ax{7, 6, 19}, atx{13, 6, 17};
    const std::string name = std::string(sizeof(T) == 4 ? "f32" : "f64") + " base " + std::to_string(base);

    tessera_matrix raw = nullptr;
    check(tessera_create_csr(h, &raw, 3, 3, 5, row_ptr.data(), col_ind.data(), values.data(),
                             TESSERA_INDEX_TYPE_I64, base, vt) == TESSERA_STATUS_SUCCESS,
          "create_csr " + name);
    Matrix A(raw);
    if (!A) return;
    check(tessera_analyze(h, A.get(), TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) == TESSERA_STATUS_SUCCESS,
          "analyze " + name);

    const T alpha = 1, beta = 0;
    for (int op : {TESSERA_OPERATION_NON_TRANSPOSE, TESSERA_OPERATION_TRANSPOSE}) {
        std::vector<T> y(3, std::numeric_limits<T>::quiet_NaN());
        check(tessera_spmv(h, op, &alpha, A.get(), x.data(), &beta, y.data()) == TESSERA_STATUS_SUCCESS,
              "spmv " + name);
        const auto &want = op == TESSERA_OPERATION_NON_TRANSPOSE ? ax : atx;
        for (std::size_t i = 0; i < 3; ++i)
            check(std::fabs(y[i] - want[i]) <= T(1e-5) * std::fabs(want[i]),
                  name + " op " + std::to_string(op) + " y[" + std::to_string(i) + "] = " +
                      std::to_string(y[i]) + ", expected " + std::to_string(want[i]));
    }

    tessera_matrix_info info{};
    check(tessera_matrix_get_info(A.get(), &info) == TESSERA_STATUS_SUCCESS, "get_info " + name);
    check(info.algorithm == TESSERA_ALGORITHM_CSR_VECTOR && info.rows == 3 && info.cols == 3 && info.nnz == 5,
          "info " + name);
    check(std::string(info.params).size() > 0, "info.params " + name);
}

}  // namespace

int main() {
    tessera_handle raw = nullptr;
    check(tessera_create_with(&raw, TESSERA_BACKEND_HOST, 0) == TESSERA_STATUS_SUCCESS, "create_with(host)");
    Handle h(raw);
    if (!h) {
        std::fprintf(stderr, "FAILED: no handle\n");
        return 1;
    }
    product<double>(h.get(), TESSERA_VALUE_TYPE_F64, TESSERA_INDEX_BASE_ZERO);
    product<double>(h.get(), TESSERA_VALUE_TYPE_F64, TESSERA_INDEX_BASE_ONE);
    product<float>(h.get(), TESSERA_VALUE_TYPE_F32, TESSERA_INDEX_BASE_ZERO);
    product<float>(h.get(), TESSERA_VALUE_TYPE_F32, TESSERA_INDEX_BASE_ONE);

    check(tessera_analyze(nullptr, nullptr, 0, 0) == TESSERA_STATUS_INVALID_HANDLE, "analyze(nullptr)");
    check(std::string(tessera_status_name(TESSERA_STATUS_INVALID_HANDLE)) == "TESSERA_STATUS_INVALID_HANDLE",
          "status_name");

    if (failures != 0) {
        std::fprintf(stderr, "FAILED: %d of %d checks\n", failures, checks);
        return 1;
    }
    std::printf("ok: %d checks\n", checks);
    return 0;
}
