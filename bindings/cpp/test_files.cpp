// Graph files: the sample files of tests/data, the New York road graph of data/, and the
// errors of missing and malformed files.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using gpumst::DType;
using gpumst::FileFormat;
using gpumst::GraphFile;
using gpumst::Status;
using gpumst_test::source_path;
using gpumst_test::throws_error;
using gpumst_test::to_vector;

namespace {

class GraphFiles : public gpumst_test::ContextTest {};

// tests/data/small.gr: 5 vertices, edges (0,1,7) (1,2,3) (0,1,7) (3,3,2) (1,0,5) (4,2,1)
// (0-based). Minimum forest: 5 (4-2, 1), 1 (1-2, 3), 4 (1-0, 5); vertex 3 is alone.
const std::vector<std::uint32_t> small_u = {0, 1, 0, 3, 1, 4};
const std::vector<std::uint32_t> small_v = {1, 2, 1, 3, 0, 2};
const std::vector<std::uint32_t> small_w = {7, 3, 7, 2, 5, 1};

}  // namespace

TEST(GraphFile, ReadsDimacsInEveryCompression)
{
    for (const char *name : {"small.gr", "small.gr.gz", "small.gr.xz"}) {
        const GraphFile file(source_path(std::string("tests/data/") + name));
        EXPECT_EQ(file.format(), FileFormat::Dimacs) << name;
        EXPECT_EQ(file.vertex_base(), 1u) << name;
        EXPECT_EQ(file.num_vertices(), 5u) << name;
        ASSERT_EQ(file.num_edges(), 6u) << name;
        EXPECT_EQ(std::vector<std::uint32_t>(file.u().begin(), file.u().end()), small_u) << name;
        EXPECT_EQ(std::vector<std::uint32_t>(file.v().begin(), file.v().end()), small_v) << name;
        EXPECT_EQ(file.weight_type(), std::optional<DType>(DType::U32)) << name;
        const gpumst::Span<const std::uint32_t> w = file.weights<std::uint32_t>();
        EXPECT_EQ(std::vector<std::uint32_t>(w.begin(), w.end()), small_w) << name;
    }
}

TEST(GraphFile, WeightsOfAnotherTypeOrNoneAreRefused)
{
    const GraphFile weighted = GraphFile::read(source_path("tests/data/small.gr"));
    EXPECT_TRUE(throws_error([&] { (void)weighted.weights<double>(); }, Status::InvalidArgument,
                             {"gpumst::GraphFile::weights", "u32, not f64"}));
    const GraphFile unweighted(source_path("tests/data/unweighted.el"), FileFormat::EdgeList);
    EXPECT_EQ(unweighted.format(), FileFormat::EdgeList);
    EXPECT_EQ(unweighted.vertex_base(), 0u);
    EXPECT_EQ(unweighted.weight_type(), std::nullopt);
    EXPECT_TRUE(throws_error([&] { (void)unweighted.weights<std::uint32_t>(); }, Status::InvalidArgument,
                             {"no weights"}));
}

TEST(GraphFile, OtherFormats)
{
    const GraphFile mtx(source_path("tests/data/sym.mtx.xz"));
    EXPECT_EQ(mtx.format(), FileFormat::MatrixMarket);
    EXPECT_EQ(mtx.vertex_base(), 1u);
    EXPECT_EQ(mtx.weight_type(), std::optional<DType>(DType::I64)) << "weights that need i64";
    const GraphFile egr(source_path("tests/data/small.egr"));
    EXPECT_EQ(egr.format(), FileFormat::Egr);
    EXPECT_EQ(egr.weight_type(), std::optional<DType>(DType::I32));
    const GraphFile gmst(source_path("tests/data/general.gmst.gz"));
    EXPECT_EQ(gmst.format(), FileFormat::Gmst);
    EXPECT_EQ(gmst.vertex_base(), 0u);
    EXPECT_EQ(gmst.weight_type(), std::optional<DType>(DType::F64)) << "the type it was written with";
    const GraphFile text(source_path("tests/data/small.txt"));
    EXPECT_EQ(text.format(), FileFormat::EdgeList);
    EXPECT_EQ(text.num_vertices(), 6u);
    EXPECT_EQ(text.num_edges(), 4u);
}

TEST_F(GraphFiles, ForestOfAFile)
{
    const GraphFile file(source_path("tests/data/small.gr.xz"));
    const gpumst::Forest forest = gpumst::minimum_spanning_forest(ctx(), file);
    EXPECT_EQ(to_vector(forest.edges()), (std::vector<std::uint64_t>{1, 4, 5}));
    EXPECT_EQ(forest.num_components(), 2u);
    EXPECT_EQ(forest.total_weight().as_uint64(), std::optional<std::uint64_t>(9));
    gpumst::MsfOptions options;
    options.maximum = true;
    options.algorithm = gpumst::Algorithm::Kruskal;
    const gpumst::Forest maximum = gpumst::minimum_spanning_forest(ctx(), file, options);
    EXPECT_EQ(to_vector(maximum.edges()), (std::vector<std::uint64_t>{0, 1, 5}));
    // The same arrays through the edge-list overload give the same forest.
    const gpumst::Forest again =
        gpumst::minimum_spanning_forest(ctx(), file.num_vertices(), file.u(), file.v(), file.weights<std::uint32_t>());
    EXPECT_EQ(to_vector(again.edges()), to_vector(forest.edges()));
}

TEST(GraphFile, MissingFileNamesThePath)
{
    const std::string path = source_path("tests/data/no-such-graph.gr");
    EXPECT_TRUE(throws_error([&] { GraphFile file(path); }, Status::InvalidArgument, {path}));
}

TEST(GraphFile, MalformedLineNamesFileAndLine)
{
    const std::string path = ::testing::TempDir() + "gpumst-cpp-malformed-" +
                             std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".gr";
    {
        std::ofstream out(path);
        out << "p sp 3 2\na 1 2 5\na 2 x 5\n";
        ASSERT_TRUE(out.good()) << "cannot write " << path;
    }
    EXPECT_TRUE(throws_error([&] { GraphFile file(path, FileFormat::Dimacs); }, Status::InvalidGraph,
                             {path + ":3:"}));
    std::remove(path.c_str());
}

TEST(GraphFile, MovesTransferTheArrays)
{
    GraphFile first(source_path("tests/data/small.gr"));
    const std::uint32_t *u = first.u().data();
    GraphFile second(std::move(first));
    EXPECT_EQ(second.u().data(), u);
    EXPECT_EQ(second.num_edges(), 6u);
    EXPECT_EQ(first.native(), nullptr);  // the moved-from state is specified: empty
    EXPECT_EQ(first.num_edges(), 0u);
    EXPECT_TRUE(first.u().empty());
    EXPECT_EQ(first.weight_type(), std::nullopt);
    EXPECT_EQ(first.format(), FileFormat::Auto);
    GraphFile third(source_path("tests/data/unweighted.el"));
    third = std::move(second);  // frees third's own file
    EXPECT_EQ(third.u().data(), u);
    gpumst::Context ctx(gpumst::Tier::Cpu);
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(ctx, first); }, Status::InvalidArgument,
                             {"moved from"}));
}

// The shipped road graph: the numbers of data/README.md. Left out under valgrind and the
// sanitizers (GPUMST_TEST_QUICK=1): it reads and decompresses 730,100 arcs.
TEST_F(GraphFiles, NewYorkRoadGraph)
{
    if (gpumst_test::quick())
        GTEST_SKIP() << "GPUMST_TEST_QUICK=1: the 365,050-edge road graph is left out";
    const GraphFile ny(source_path("data/NY.gr.xz"));
    EXPECT_EQ(ny.format(), FileFormat::Dimacs);
    EXPECT_EQ(ny.num_vertices(), 264346u);
    EXPECT_EQ(ny.num_edges(), 365050u);
    const gpumst::Forest forest = gpumst::minimum_spanning_forest(ctx(), ny);
    EXPECT_EQ(forest.num_edges(), 264345u);
    EXPECT_EQ(forest.num_components(), 1u);
    EXPECT_EQ(forest.total_weight().as_uint64(), std::optional<std::uint64_t>(27253492594u));
    EXPECT_EQ(forest.total_weight_string(), "27253492594");
}
