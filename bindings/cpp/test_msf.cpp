// Minimum spanning forests: a hand-checked graph, random graphs against Kruskal for every
// weight type and algorithm, CSR against edge lists, labels, maximum and unweighted
// forests, exact totals, errors, Forest moves, and one Context shared by threads.
#include <exception>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using gpumst::Algorithm;
using gpumst::Forest;
using gpumst::MsfOptions;
using gpumst::Status;
using gpumst_test::throws_error;
using gpumst_test::to_vector;
using Ids = std::vector<std::uint64_t>;

namespace {

const Algorithm all_algorithms[] = {Algorithm::Auto, Algorithm::Boruvka, Algorithm::Prim, Algorithm::Strut,
                                    Algorithm::Kruskal};

const char *name(Algorithm algorithm)
{
    switch (algorithm) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Boruvka: return "boruvka";
    case Algorithm::Prim: return "prim";
    case Algorithm::Strut: return "strut";
    case Algorithm::Kruskal: return "kruskal";
    }
    return "?";
}

MsfOptions with(Algorithm algorithm, bool maximum = false, bool labels = false)
{
    MsfOptions options;
    options.algorithm = algorithm;
    options.maximum = maximum;
    options.labels = labels;
    return options;
}

// Six vertices; vertex 5 is isolated and edge 6 is a self-loop.
//   id:      0  1  2  3  4  5  6  7
//   u-v:   0-1 1-2 0-2 2-3 3-4 2-4 4-4 1-3
//   weight:  4  2  4  8  1  7  0  9
// Minimum, by (weight, id): 4 (3-4), 1 (1-2), 0 (0-1); 2 closes 0-1-2 (and loses the tie
// with 0 by id); 5 (2-4) joins the two parts; 3 and 7 close cycles. Total 1+2+4+7 = 14.
// Maximum, by (weight desc, id): 7 (1-3), 3 (2-3), 5 (2-4), 0 (0-1, again before 2).
// Total 9+8+7+4 = 28. By id alone (unweighted): 0, 1, (2 closes), 3, 4.
const std::vector<std::uint32_t> hand_u = {0, 1, 0, 2, 3, 2, 4, 1};
const std::vector<std::uint32_t> hand_v = {1, 2, 2, 3, 4, 4, 4, 3};
const std::vector<int> hand_w = {4, 2, 4, 8, 1, 7, 0, 9};
const Ids hand_min = {0, 1, 4, 5};
const Ids hand_max = {0, 3, 5, 7};
const Ids hand_by_id = {0, 1, 3, 4};
const std::vector<std::uint32_t> hand_labels = {0, 0, 0, 0, 0, 5};

template <class W>
gpumst_test::EdgeListGraph<W> hand_graph()
{
    gpumst_test::EdgeListGraph<W> g;
    g.num_vertices = 6;
    g.u = hand_u;
    g.v = hand_v;
    for (int w : hand_w)
        g.w.push_back(static_cast<W>(w));
    return g;
}

// The CSR forest's ids are positions; each must be an entry from its lower vertex.
template <class W>
::testing::AssertionResult positions_to_edges(const gpumst_test::CsrGraph<W> &csr, const Forest &forest, Ids &edges)
{
    edges.clear();
    for (std::uint64_t k : forest.edges()) {
        if (k >= csr.targets.size())
            return ::testing::AssertionFailure() << "CSR edge id " << k << " is not a position";
        const auto row = static_cast<std::uint32_t>(
            std::upper_bound(csr.offsets.begin(), csr.offsets.end(), k) - csr.offsets.begin() - 1);
        if (!(row < csr.targets[k]))
            return ::testing::AssertionFailure() << "CSR edge id " << k << " is the entry from the higher vertex "
                                                 << row << " (to " << csr.targets[k] << ")";
        edges.push_back(csr.edge_of[k]);
    }
    std::sort(edges.begin(), edges.end());
    return ::testing::AssertionSuccess();
}

template <class W>
class Msf : public gpumst_test::ContextTest {};

TYPED_TEST_SUITE(Msf, gpumst_test::ElementTypes);

}  // namespace

TYPED_TEST(Msf, HandCheckedGraphEveryAlgorithm)
{
    using W = TypeParam;
    const auto g = hand_graph<W>();
    for (Algorithm algorithm : all_algorithms) {
        const Forest forest = gpumst::minimum_spanning_forest<W>(this->ctx(), g.num_vertices, g.u, g.v, g.w,
                                                                 with(algorithm, false, true));
        EXPECT_EQ(to_vector(forest.edges()), hand_min) << name(algorithm);
        EXPECT_EQ(forest.num_edges(), 4u);
        EXPECT_EQ(forest.num_vertices(), 6u);
        EXPECT_EQ(forest.num_components(), 2u);
        EXPECT_EQ(std::vector<std::uint32_t>(forest.labels().begin(), forest.labels().end()), hand_labels);
        EXPECT_EQ(forest.tier(), this->ctx().tier());
        if constexpr (std::is_integral_v<W>) {
            EXPECT_EQ(forest.total_weight().as_int64(), std::optional<std::int64_t>(14)) << name(algorithm);
        }
        EXPECT_EQ(forest.total_weight().value, 14.0);
        EXPECT_EQ(forest.total_weight().is_float, std::is_floating_point_v<W>);
        EXPECT_EQ(forest.total_weight_string(), "14");

        const Forest maximum = gpumst::minimum_spanning_forest<W>(this->ctx(), g.num_vertices, g.u, g.v, g.w,
                                                                  with(algorithm, true));
        EXPECT_EQ(to_vector(maximum.edges()), hand_max) << name(algorithm);
        EXPECT_EQ(maximum.total_weight().value, 28.0);
        EXPECT_TRUE(maximum.labels().empty()) << "labels only when asked for";
    }
}

TYPED_TEST(Msf, HandCheckedGraphAsCsr)
{
    using W = TypeParam;
    const auto csr = gpumst_test::to_csr(hand_graph<W>());
    for (bool maximum : {false, true}) {
        const Forest forest = gpumst::minimum_spanning_forest_csr<W>(this->ctx(), csr.offsets, csr.targets, csr.w,
                                                                     with(Algorithm::Auto, maximum, true));
        Ids edges;
        ASSERT_TRUE(positions_to_edges(csr, forest, edges));
        EXPECT_EQ(edges, maximum ? hand_max : hand_min);
        EXPECT_EQ(forest.num_components(), 2u);
        EXPECT_EQ(std::vector<std::uint32_t>(forest.labels().begin(), forest.labels().end()), hand_labels);
    }
}

TYPED_TEST(Msf, RandomGraphsMatchKruskalWithTies)
{
    using W = TypeParam;
    struct Shape {
        std::uint32_t n;
        std::size_t m;
    };
    std::vector<Shape> shapes = {{1, 3}, {2, 5}, {50, 40}, {300, 1500}};
    if (!gpumst_test::quick())
        shapes.push_back({5000, 40000});
    std::uint64_t seed = 1;
    for (const Shape &shape : shapes) {
        const auto g = gpumst_test::random_graph<W>(seed++, shape.n, shape.m, 20);
        const std::vector<std::uint32_t> labels = gpumst_test::component_labels(g.num_vertices, g.u, g.v);
        const std::set<std::uint32_t> components(labels.begin(), labels.end());
        for (bool maximum : {false, true}) {
            const Ids expected = gpumst_test::kruskal(g.num_vertices, g.u, g.v, g.w, maximum);
            for (Algorithm algorithm : all_algorithms) {
                const Forest forest =
                    gpumst::minimum_spanning_forest(this->ctx(), g.num_vertices, g.u, g.v, g.w,
                                                    with(algorithm, maximum, true));  // W deduced from g.w
                EXPECT_EQ(to_vector(forest.edges()), expected) << "n = " << shape.n << ", m = " << shape.m << ", "
                                                               << name(algorithm) << (maximum ? ", maximum" : "");
                EXPECT_EQ(std::vector<std::uint32_t>(forest.labels().begin(), forest.labels().end()), labels)
                    << "n = " << shape.n << ", " << name(algorithm);
                EXPECT_EQ(forest.num_components(), components.size());
            }
        }
    }
}

TYPED_TEST(Msf, RandomCsrMatchesKruskalOnCsrIds)
{
    using W = TypeParam;
    const auto csr = gpumst_test::to_csr(gpumst_test::random_graph<W>(77, 400, 2500, 10));
    std::vector<std::uint64_t> position_of;
    const auto by_position = csr.as_edge_list_by_position(position_of);
    for (bool maximum : {false, true}) {
        Ids expected;
        for (std::uint64_t e : gpumst_test::kruskal(by_position.num_vertices, by_position.u, by_position.v,
                                                    by_position.w, maximum))
            expected.push_back(position_of[e]);
        std::sort(expected.begin(), expected.end());
        for (Algorithm algorithm : all_algorithms) {
            const Forest forest = gpumst::minimum_spanning_forest_csr(this->ctx(), csr.offsets, csr.targets, csr.w,
                                                                      with(algorithm, maximum));
            EXPECT_EQ(to_vector(forest.edges()), expected) << name(algorithm) << (maximum ? ", maximum" : "");
        }
    }
}

TYPED_TEST(Msf, EdgeListAndCsrAgreeOnDistinctWeights)
{
    using W = TypeParam;
    // Distinct weights make the forest unique, so the two numberings give the same edges.
    auto g = gpumst_test::random_graph<W>(5, 500, 3000, 1);
    gpumst_test::Rng rng(9);
    std::vector<std::uint64_t> order(g.w.size());
    std::iota(order.begin(), order.end(), 0u);
    for (std::size_t i = order.size(); i > 1; i--)
        std::swap(order[i - 1], order[rng.below(i)]);
    for (std::size_t e = 0; e < g.w.size(); e++)
        g.w[e] = static_cast<W>(order[e]);
    const auto csr = gpumst_test::to_csr(g);
    for (bool maximum : {false, true}) {
        const Forest from_edges = gpumst::minimum_spanning_forest(this->ctx(), g.num_vertices, g.u, g.v, g.w,
                                                                  with(Algorithm::Auto, maximum));
        const Forest from_csr = gpumst::minimum_spanning_forest_csr(this->ctx(), csr.offsets, csr.targets, csr.w,
                                                                    with(Algorithm::Auto, maximum));
        Ids mapped;
        ASSERT_TRUE(positions_to_edges(csr, from_csr, mapped));
        EXPECT_EQ(mapped, to_vector(from_edges.edges())) << (maximum ? "maximum" : "minimum");
        EXPECT_EQ(from_csr.total_weight_string(), from_edges.total_weight_string());
    }
}

TYPED_TEST(Msf, IntegerAndFloatTotalsAreExact)
{
    using W = TypeParam;
    const auto g = gpumst_test::random_graph<W>(21, 1000, 5000, 1000);
    const Forest forest = gpumst::minimum_spanning_forest(this->ctx(), g.num_vertices, g.u, g.v, g.w);
    double sum = 0;  // small integers or quarter steps: exact in a double
    std::int64_t integer_sum = 0;
    for (std::uint64_t e : forest.edges()) {
        sum += static_cast<double>(g.w[e]);
        integer_sum += static_cast<std::int64_t>(g.w[e]);
    }
    const gpumst::TotalWeight total = forest.total_weight();
    EXPECT_EQ(total.value, sum);
    EXPECT_EQ(total.is_float, std::is_floating_point_v<W>);
    if constexpr (std::is_integral_v<W>) {
        EXPECT_EQ(total.as_int64(), std::optional<std::int64_t>(integer_sum));
        EXPECT_EQ(forest.total_weight_string(), std::to_string(integer_sum));
    } else {
        EXPECT_EQ(total.as_int64(), std::nullopt) << "no exact integer parts for float weights";
    }
}

// ---- options and special graphs -----------------------------------------------------

class MsfDetails : public gpumst_test::ContextTest {};

TEST_F(MsfDetails, UnweightedForestsTakeTheLowestIds)
{
    const auto g = hand_graph<double>();
    const Forest without_weights = gpumst::minimum_spanning_forest(ctx(), g.num_vertices, g.u, g.v);
    EXPECT_EQ(to_vector(without_weights.edges()), hand_by_id);
    EXPECT_EQ(without_weights.total_weight().value, 4.0) << "an unweighted forest weighs its edge count";

    MsfOptions ignore;
    ignore.unweighted = true;
    const Forest ignoring = gpumst::minimum_spanning_forest(ctx(), g.num_vertices, g.u, g.v, g.w, ignore);
    EXPECT_EQ(to_vector(ignoring.edges()), hand_by_id);

    const auto csr = gpumst_test::to_csr(g);
    const Forest csr_forest = gpumst::minimum_spanning_forest_csr(ctx(), csr.offsets, csr.targets);
    Ids edges;
    ASSERT_TRUE(positions_to_edges(csr, csr_forest, edges));
    EXPECT_EQ(edges.size(), 4u);
    EXPECT_EQ(csr_forest.num_components(), 2u);
}

TEST_F(MsfDetails, EmptyGraphsAndIsolatedVertices)
{
    const std::vector<std::uint32_t> none;
    const Forest empty = gpumst::minimum_spanning_forest(ctx(), 0, none, none);
    EXPECT_EQ(empty.num_edges(), 0u);
    EXPECT_TRUE(empty.edges().empty());
    EXPECT_EQ(empty.num_components(), 0u);

    MsfOptions labels;
    labels.labels = true;
    const Forest isolated = gpumst::minimum_spanning_forest(ctx(), 4, none, none, labels);
    EXPECT_EQ(isolated.num_edges(), 0u);
    EXPECT_EQ(isolated.num_components(), 4u);
    EXPECT_EQ(std::vector<std::uint32_t>(isolated.labels().begin(), isolated.labels().end()),
              (std::vector<std::uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(isolated.total_weight_string(), "0");

    const std::vector<std::uint64_t> zero = {0};
    const Forest no_vertices = gpumst::minimum_spanning_forest_csr(ctx(), zero, none);
    EXPECT_EQ(no_vertices.num_vertices(), 0u);
}

TEST_F(MsfDetails, WideIntegerTotalsUse128Bits)
{
    const std::vector<std::uint32_t> u = {0, 1, 2}, v = {1, 2, 3};
    const std::vector<std::uint64_t> huge(3, std::numeric_limits<std::uint64_t>::max());
    const gpumst::TotalWeight big = gpumst::minimum_spanning_forest(ctx(), 4, u, v, huge).total_weight();
    // 3 (2^64 - 1) = 2 * 2^64 + (2^64 - 3)
    EXPECT_EQ(big.exact_high, 2);
    EXPECT_EQ(big.exact_low, std::numeric_limits<std::uint64_t>::max() - 2);
    EXPECT_EQ(big.as_uint64(), std::nullopt);
    EXPECT_EQ(big.as_int64(), std::nullopt);
    EXPECT_DOUBLE_EQ(big.value, 3.0 * 18446744073709551615.0);
    EXPECT_EQ(gpumst::minimum_spanning_forest(ctx(), 4, u, v, huge).total_weight_string(), "55340232221128654845");

    const std::vector<std::int64_t> negative = {-5, -7, 0};
    const Forest small = gpumst::minimum_spanning_forest(ctx(), 4, u, v, negative);
    EXPECT_EQ(small.total_weight().exact_high, -1);
    EXPECT_EQ(small.total_weight().as_int64(), std::optional<std::int64_t>(-12));
    EXPECT_EQ(small.total_weight().as_uint64(), std::nullopt);
    EXPECT_EQ(small.total_weight_string(), "-12");

    const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
    const std::vector<std::int64_t> lowest_two = {lowest, lowest, 0};
    const gpumst::TotalWeight below = gpumst::minimum_spanning_forest(ctx(), 4, u, v, lowest_two).total_weight();
    EXPECT_EQ(below.exact_high, -1);  // -2^64
    EXPECT_EQ(below.exact_low, 0u);
    EXPECT_EQ(below.as_int64(), std::nullopt);
    const std::vector<std::int64_t> just_fits = {lowest, 0, 0};
    EXPECT_EQ(gpumst::minimum_spanning_forest(ctx(), 4, u, v, just_fits).total_weight().as_int64(),
              std::optional<std::int64_t>(lowest));

    const std::vector<double> fractions = {1.5, 0.25, 0.125};
    const Forest real = gpumst::minimum_spanning_forest(ctx(), 4, u, v, fractions);
    EXPECT_TRUE(real.total_weight().is_float);
    EXPECT_EQ(real.total_weight().value, 1.875);
    EXPECT_EQ(real.total_weight_string(), "1.875");
}

// ---- errors -------------------------------------------------------------------------

class MsfErrors : public gpumst_test::ContextTest {};

TEST_F(MsfErrors, VertexOutOfRangeNamesTheEdge)
{
    const std::vector<std::uint32_t> u = {0, 1, 2}, v = {1, 7, 0};
    const std::vector<float> w = {1, 2, 3};
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(ctx(), 3, u, v, w); }, Status::InvalidGraph,
                             {"gpumst_msf", "edge 1", "7", "out of range"}));
}

TEST_F(MsfErrors, NanWeightIsAnInvalidGraph)
{
    const std::vector<std::uint32_t> u = {0, 1, 2}, v = {1, 2, 0};
    const std::vector<double> w = {1, 2, std::numeric_limits<double>::quiet_NaN()};
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(ctx(), 3, u, v, w); }, Status::InvalidGraph,
                             {"edge 2", "NaN"}));
}

TEST_F(MsfErrors, MismatchedLengthsAreRefusedBeforeTheCall)
{
    const std::vector<std::uint32_t> three = {0, 1, 2}, two = {1, 2};
    const std::vector<std::int32_t> w2 = {1, 2}, w3 = {1, 2, 3};
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(ctx(), 3, three, two, w3); },
                             Status::InvalidArgument,
                             {"gpumst::minimum_spanning_forest", "v has 2 elements but u has 3"}));
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(ctx(), 3, three, two); }, Status::InvalidArgument,
                             {"v has 2 elements"}));
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(ctx(), 3, three, three, w2); },
                             Status::InvalidArgument, {"w has 2 elements but u has 3"}));

    const std::vector<std::uint64_t> offsets = {0, 1, 2};
    const std::vector<std::uint32_t> targets = {1, 0};
    const std::vector<std::int32_t> one_weight = {5};
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest_csr(ctx(), offsets, targets, one_weight); },
                             Status::InvalidArgument,
                             {"gpumst::minimum_spanning_forest_csr", "w has 1 element but targets has 2"}));
    const std::vector<std::uint64_t> no_offsets;
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest_csr(ctx(), no_offsets, targets); },
                             Status::InvalidArgument, {"offsets is empty"}));
}

TEST_F(MsfErrors, MalformedCsrIsAnInvalidGraph)
{
    const std::vector<std::uint64_t> offsets = {0, 1, 1};
    const std::vector<std::uint32_t> one_way = {1};
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest_csr(ctx(), offsets, one_way); },
                             Status::InvalidGraph, {"not symmetric"}));
    const std::vector<std::uint64_t> past_the_end = {0, 1, 3};
    const std::vector<std::uint32_t> targets = {1, 0};
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest_csr(ctx(), past_the_end, targets); },
                             Status::InvalidGraph, {"offsets[2]"}));
}

TEST_F(MsfErrors, UnknownAlgorithmIsAnInvalidArgument)
{
    const std::vector<std::uint32_t> u = {0}, v = {1};
    EXPECT_TRUE(throws_error(
        [&] { gpumst::minimum_spanning_forest(ctx(), 2, u, v, with(static_cast<Algorithm>(17))); },
        Status::InvalidArgument, {"algorithm 17"}));
}

// ---- ownership ----------------------------------------------------------------------

class ForestOwnership : public gpumst_test::ContextTest {};

TEST_F(ForestOwnership, MovesKeepTheEdgesAndEmptyTheSource)
{
    const auto g = hand_graph<std::int32_t>();
    Forest first = gpumst::minimum_spanning_forest(ctx(), g.num_vertices, g.u, g.v, g.w);
    const std::uint64_t *edges = first.edges().data();
    EXPECT_EQ(edges, gpumst_forest_edges(first.native())) << "edges() is a view, not a copy";

    Forest second(std::move(first));
    EXPECT_EQ(second.edges().data(), edges) << "moving keeps the same storage";
    EXPECT_EQ(to_vector(second.edges()), hand_min);
    EXPECT_FALSE(static_cast<bool>(first));  // the moved-from state is specified: empty
    EXPECT_EQ(first.num_edges(), 0u);
    EXPECT_TRUE(first.edges().empty());
    EXPECT_TRUE(first.labels().empty());
    EXPECT_EQ(first.num_vertices(), 0u);
    EXPECT_EQ(first.tier(), gpumst::Tier::Auto);
    EXPECT_TRUE(throws_error([&] { (void)first.total_weight(); }, Status::InvalidArgument, {"moved-from"}));
    EXPECT_TRUE(throws_error([&] { (void)first.total_weight_string(); }, Status::InvalidArgument, {"moved-from"}));

    Forest third = gpumst::minimum_spanning_forest(ctx(), g.num_vertices, g.u, g.v);
    third = std::move(second);  // frees third's own forest
    EXPECT_EQ(to_vector(third.edges()), hand_min);
    first = std::move(third);
    EXPECT_EQ(first.total_weight_string(), "14");

    gpumst_forest *raw = first.release();
    EXPECT_FALSE(static_cast<bool>(first));
    EXPECT_EQ(gpumst_forest_num_edges(raw), 4u);
    gpumst_forest_free(raw);

    const Forest never_computed;
    EXPECT_EQ(never_computed.num_edges(), 0u);
}

// ---- threads ------------------------------------------------------------------------

class MsfThreads : public gpumst_test::ContextTest {};

// Several threads compute forests on one Context at once; every result must equal the
// one computed alone.
TEST_F(MsfThreads, SharedContextGivesEqualForests)
{
    const std::uint32_t n = gpumst_test::quick() ? 500 : 20000;
    const std::size_t m = gpumst_test::quick() ? 2500 : 120000;
    const auto g = gpumst_test::random_graph<double>(31, n, m, 50);
    const Ids expected = to_vector(gpumst::minimum_spanning_forest(ctx(), n, g.u, g.v, g.w).edges());
    ASSERT_FALSE(expected.empty());

    constexpr int threads = 4;
    constexpr int rounds = 3;
    std::vector<std::vector<Ids>> results(threads);
    std::vector<std::string> errors(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++)
        workers.emplace_back([&, t] {
            try {
                for (int r = 0; r < rounds; r++) {
                    const Algorithm algorithm = all_algorithms[(t + r) % 5];
                    results[t].push_back(
                        to_vector(gpumst::minimum_spanning_forest(ctx(), n, g.u, g.v, g.w, with(algorithm)).edges()));
                }
            } catch (const std::exception &e) {
                errors[t] = e.what();
            }
        });
    for (std::thread &worker : workers)
        worker.join();
    for (int t = 0; t < threads; t++) {
        EXPECT_EQ(errors[t], "") << "thread " << t;
        ASSERT_EQ(results[t].size(), static_cast<std::size_t>(rounds)) << "thread " << t;
        for (int r = 0; r < rounds; r++)
            EXPECT_TRUE(results[t][r] == expected) << "thread " << t << ", round " << r << " ("
                                                   << name(all_algorithms[(t + r) % 5]) << "): "
                                                   << results[t][r].size() << " edges, expected " << expected.size();
    }
}
