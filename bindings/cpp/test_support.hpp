// Shared pieces of the C++ tests: the context under test, paths to the sample data, an
// Error matcher, random graphs and a sequential Kruskal reference.
#ifndef GPUMST_CPP_TEST_SUPPORT_HPP
#define GPUMST_CPP_TEST_SUPPORT_HPP

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpumst.hpp"

namespace gpumst {
// GoogleTest prints these by name in failure messages (found by argument-dependent lookup).
inline void PrintTo(Status status, std::ostream *os) { *os << to_string(status); }
inline void PrintTo(Tier tier, std::ostream *os) { *os << to_string(tier); }
inline void PrintTo(DType dtype, std::ostream *os) { *os << to_string(dtype); }
}  // namespace gpumst

namespace gpumst_test {

// The six element types, for typed tests.
using ElementTypes = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double>;

// The tier the tests run on: GPUMST_TEST_TIER = cpu (default), opencl, cuda or auto.
gpumst::Tier tier_under_test();

// Fixture for every test that needs a context: one context on the tier under test,
// shared by the whole run. Tests are skipped, with the reason, when that tier does not
// open on this machine.
class ContextTest : public ::testing::Test {
protected:
    void SetUp() override;
    gpumst::Context &ctx() { return *ctx_; }

private:
    gpumst::Context *ctx_ = nullptr;
};

// A file of the source tree: GPUMST_SOURCE_DIR from the environment, else the one the
// tests were compiled with.
std::string source_path(const std::string &relative);

// GPUMST_TEST_QUICK=1 (scripts/test_cpp.sh sets it under valgrind): leave out the road
// graph and shrink the largest random graphs.
bool quick();

// `call` throws gpumst::Error with `status` and a message containing every needle.
template <class Call>
::testing::AssertionResult throws_error(Call &&call, gpumst::Status status, std::vector<std::string> needles = {})
{
    try {
        call();
    } catch (const gpumst::Error &e) {
        if (e.status() != status)
            return ::testing::AssertionFailure() << "threw status '" << to_string(e.status()) << "', expected '"
                                                 << to_string(status) << "': " << e.what();
        const std::string what = e.what();
        if (what != std::string(to_string(status)) + ": " + e.message())
            return ::testing::AssertionFailure() << "what() \"" << what << "\" is not \"<status>: <message()>\"";
        for (const std::string &needle : needles)
            if (what.find(needle) == std::string::npos)
                return ::testing::AssertionFailure() << "message \"" << what << "\" lacks \"" << needle << "\"";
        return ::testing::AssertionSuccess() << e.what();
    } catch (const std::exception &e) {
        return ::testing::AssertionFailure() << "threw a non-gpumst exception: " << e.what();
    }
    return ::testing::AssertionFailure() << "did not throw (expected '" << to_string(status) << "')";
}

// ---- deterministic random data (the same on every standard library) ------------------

class Rng {
public:
    explicit Rng(std::uint64_t seed) : engine_(seed) {}
    std::uint64_t next() { return engine_(); }
    // Uniform enough in [0, bound) for tests (bound > 0).
    std::uint64_t below(std::uint64_t bound) { return next() % bound; }
    // In [lo, hi].
    std::int64_t between(std::int64_t lo, std::int64_t hi)
    {
        return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
    }

private:
    std::mt19937_64 engine_;
};

// A small value of T from a range with many repeats: [-range, range] for signed types
// and floats (floats in quarter steps, all exact), [0, 2 range] for unsigned ones.
template <class T>
T small_value(Rng &rng, std::int64_t range)
{
    if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(rng.between(-4 * range, 4 * range)) / T(4);
    else if constexpr (std::is_signed_v<T>)
        return static_cast<T>(rng.between(-range, range));
    else
        return static_cast<T>(rng.between(0, 2 * range));
}

// ---- graphs --------------------------------------------------------------------------

template <class W>
struct EdgeListGraph {
    std::uint64_t num_vertices = 0;
    std::vector<std::uint32_t> u, v;
    std::vector<W> w;
};

// m random edges over n vertices, self-loops and parallel edges included, weights from
// small_value (many ties, so the edge-id tie-break matters).
template <class W>
EdgeListGraph<W> random_graph(std::uint64_t seed, std::uint32_t n, std::size_t m, std::int64_t weight_range)
{
    Rng rng(seed);
    EdgeListGraph<W> g;
    g.num_vertices = n;
    for (std::size_t i = 0; i < m; i++) {
        g.u.push_back(static_cast<std::uint32_t>(rng.below(n)));
        g.v.push_back(static_cast<std::uint32_t>(rng.below(n)));
        g.w.push_back(small_value<W>(rng, weight_range));
    }
    return g;
}

class DisjointSets {
public:
    explicit DisjointSets(std::uint64_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
    std::uint32_t find(std::uint32_t x)
    {
        while (parent_[x] != x)
            x = parent_[x] = parent_[parent_[x]];
        return x;
    }
    // Joins the sets of a and b; false if they were one already.
    bool unite(std::uint32_t a, std::uint32_t b)
    {
        a = find(a);
        b = find(b);
        if (a == b)
            return false;
        parent_[std::max(a, b)] = std::min(a, b);  // the root is the smallest id
        return true;
    }

private:
    std::vector<std::uint32_t> parent_;
};

// Kruskal's forest of the edge list under the (weight, id) order, or (weight descending,
// id) for the maximum; unweighted (w empty): by id. Self-loops are never taken. Ids
// ascending.
template <class W>
std::vector<std::uint64_t> kruskal(std::uint64_t num_vertices, const std::vector<std::uint32_t> &u,
                                   const std::vector<std::uint32_t> &v, const std::vector<W> &w, bool maximum)
{
    std::vector<std::uint64_t> order(u.size());
    std::iota(order.begin(), order.end(), 0u);
    if (!w.empty())
        std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
            return maximum ? w[b] < w[a] : w[a] < w[b];
        });
    DisjointSets sets(num_vertices);
    std::vector<std::uint64_t> forest;
    for (std::uint64_t e : order)
        if (sets.unite(u[e], v[e]))
            forest.push_back(e);
    std::sort(forest.begin(), forest.end());
    return forest;
}

// Per vertex the smallest vertex id of its connected component.
inline std::vector<std::uint32_t> component_labels(std::uint64_t num_vertices, const std::vector<std::uint32_t> &u,
                                                   const std::vector<std::uint32_t> &v)
{
    DisjointSets sets(num_vertices);
    for (std::size_t e = 0; e < u.size(); e++)
        sets.unite(u[e], v[e]);
    std::vector<std::uint32_t> labels(num_vertices);
    for (std::uint32_t x = 0; x < num_vertices; x++)
        labels[x] = sets.find(x);
    return labels;
}

// A symmetric CSR of an edge list without its self-loops. edge_of[k] is the edge-list id
// of entry k; an edge's CSR id is the position of its entry from the lower vertex.
template <class W>
struct CsrGraph {
    std::vector<std::uint64_t> offsets;
    std::vector<std::uint32_t> targets;
    std::vector<W> w;
    std::vector<std::uint64_t> edge_of;

    // The CSR's own edge list: one edge per lower-vertex entry, id = its position.
    EdgeListGraph<W> as_edge_list_by_position(std::vector<std::uint64_t> &position_of) const
    {
        EdgeListGraph<W> g;
        g.num_vertices = offsets.size() - 1;
        position_of.clear();
        for (std::uint32_t x = 0; x + 1 < offsets.size(); x++)
            for (std::uint64_t k = offsets[x]; k < offsets[x + 1]; k++)
                if (x < targets[k]) {
                    g.u.push_back(x);
                    g.v.push_back(targets[k]);
                    g.w.push_back(w[k]);
                    position_of.push_back(k);
                }
        return g;
    }
};

template <class W>
CsrGraph<W> to_csr(const EdgeListGraph<W> &g)
{
    CsrGraph<W> csr;
    std::vector<std::uint64_t> degree(g.num_vertices + 1, 0);
    for (std::size_t e = 0; e < g.u.size(); e++)
        if (g.u[e] != g.v[e]) {
            degree[g.u[e] + 1]++;
            degree[g.v[e] + 1]++;
        }
    csr.offsets.assign(degree.begin(), degree.end());
    std::partial_sum(csr.offsets.begin(), csr.offsets.end(), csr.offsets.begin());
    csr.targets.resize(csr.offsets.back());
    csr.w.resize(csr.offsets.back());
    csr.edge_of.resize(csr.offsets.back());
    std::vector<std::uint64_t> next(csr.offsets.begin(), csr.offsets.end() - 1);
    for (std::size_t e = 0; e < g.u.size(); e++) {
        if (g.u[e] == g.v[e])
            continue;
        for (auto [from, to] : {std::pair{g.u[e], g.v[e]}, std::pair{g.v[e], g.u[e]}}) {
            const std::uint64_t k = next[from]++;
            csr.targets[k] = to;
            csr.w[k] = g.w[e];
            csr.edge_of[k] = e;
        }
    }
    return csr;
}

inline std::vector<std::uint64_t> to_vector(gpumst::Span<const std::uint64_t> span)
{
    return std::vector<std::uint64_t>(span.begin(), span.end());
}

}  // namespace gpumst_test

#endif  // GPUMST_CPP_TEST_SUPPORT_HPP
