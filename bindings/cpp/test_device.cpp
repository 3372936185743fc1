// Data in device memory through gpumst.hpp: native(), minimum_spanning_forest_device and
// minimum_spanning_forest_csr_device, scan_device, argmin_device / argmax_device and
// segmented_argmin_device / segmented_argmax_device on the OpenCL tier where it opens (PoCL in CI), against
// the host functions; refusals on the CPU tier. The memory is made as an application
// makes it (ffi-tests/device_memory.h: clCreateBuffer in gpumst's cl_context).
#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.hpp"

#define DEVICE_CHECK(cond, what) EXPECT_TRUE(cond) << (what)
#include "device_memory.h"

using gpumst::Status;
using gpumst_test::throws_error;
using gpumst_test::to_vector;

TEST(DeviceMemory, CpuContextsRefuseWithAReason)
{
    gpumst::Context cpu(gpumst::Tier::Cpu);
    EXPECT_TRUE(throws_error([&] { gpumst::native(cpu); }, Status::BackendUnavailable, {"GPU tier"}));
    std::uint32_t *nowhere = nullptr;
    std::uint64_t *ids = nullptr;
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest_device(cpu, 2, 1, nowhere, nowhere, ids); },
                             Status::BackendUnavailable, {"GPU tier"}));
}

TEST(DeviceMemory, OpenClForestAndPrimitivesMatchTheHost)
{
    if (gpumst_test::quick())
        GTEST_SKIP() << "left out of the quick (valgrind) run: PoCL's kernel compiler under valgrind takes minutes";
    std::optional<gpumst::Context> found;
    try {
        found.emplace(gpumst::Tier::OpenCL);
    } catch (const gpumst::Error &e) {
        GTEST_SKIP() << "the OpenCL tier does not open here: " << e.what();
    }
    gpumst::Context &ctx = *found;
    device d;
    ASSERT_TRUE(open_device(&d, ctx.native())) << "libOpenCL.so.1's functions";
    const std::uint32_t n = 500;
    std::vector<std::uint32_t> u, v;
    std::vector<double> w;
    std::mt19937_64 random(11);
    for (int e = 0; e < 4000; e++) {
        u.push_back(static_cast<std::uint32_t>(random() % n));
        v.push_back(static_cast<std::uint32_t>(random() % n));
        w.push_back(static_cast<double>(random() % 300) / 8.0);
    }
    void *du = device_copy(&d, u.data(), u.size() * 4), *dv = device_copy(&d, v.data(), v.size() * 4);
    void *dw = device_copy(&d, w.data(), w.size() * 8), *ids = device_copy(&d, nullptr, (n - 1) * 8);
    const gpumst::Forest host = gpumst::minimum_spanning_forest(ctx, n, u, v, w);
    const gpumst::DeviceForest forest = gpumst::minimum_spanning_forest_device(
        ctx, n, u.size(), static_cast<const std::uint32_t *>(du), static_cast<const std::uint32_t *>(dv),
        static_cast<const double *>(dw), static_cast<std::uint64_t *>(ids));
    ASSERT_EQ(forest.num_edges, host.edges().size());
    std::vector<std::uint64_t> got(forest.num_edges);
    device_read(&d, ids, got.data(), got.size() * 8);
    EXPECT_EQ(got, to_vector(host.edges()));
    EXPECT_EQ(forest.num_components, host.num_components());
    ASSERT_TRUE(forest.total_weight.has_value());
    EXPECT_EQ(forest.total_weight->value, host.total_weight().value);
    gpumst::DeviceMsfOptions no_total;
    no_total.total_weight = false;
    no_total.msf.maximum = true;
    EXPECT_FALSE(gpumst::minimum_spanning_forest_device(ctx, n, u.size(), static_cast<const std::uint32_t *>(du),
                                                        static_cast<const std::uint32_t *>(dv),
                                                        static_cast<const double *>(dw),
                                                        static_cast<std::uint64_t *>(ids), no_total)
                     .total_weight.has_value());

    // Labels on the device, for the first 300 edges (many components), against the host's.
    const std::size_t few = 300;
    gpumst::MsfOptions labelled;
    labelled.labels = true;
    const gpumst::Forest sparse = gpumst::minimum_spanning_forest(
        ctx, n, gpumst::Span<const std::uint32_t>(u.data(), few), gpumst::Span<const std::uint32_t>(v.data(), few),
        gpumst::Span<const double>(w.data(), few), labelled);
    void *dlabels = device_copy(&d, nullptr, n * 4);
    gpumst::DeviceMsfOptions with_labels;
    with_labels.labels = static_cast<std::uint32_t *>(dlabels);
    gpumst::minimum_spanning_forest_device(ctx, n, few, static_cast<const std::uint32_t *>(du),
                                           static_cast<const std::uint32_t *>(dv), static_cast<const double *>(dw),
                                           static_cast<std::uint64_t *>(ids), with_labels);
    std::vector<std::uint32_t> labels(n);
    device_read(&d, dlabels, labels.data(), n * 4);
    const gpumst::Span<const std::uint32_t> expected_labels = sparse.labels();
    EXPECT_EQ(labels, std::vector<std::uint32_t>(expected_labels.begin(), expected_labels.end()));
    EXPECT_GT(sparse.num_components(), 100u);
    device_free(&d, dlabels);

    // The same graph as a symmetric CSR (rows in edge order, self-loops once).
    std::vector<std::uint64_t> row_offsets(n + 1), fill(n);
    for (std::size_t e = 0; e < u.size(); e++) {
        row_offsets[u[e] + 1]++;
        if (u[e] != v[e])
            row_offsets[v[e] + 1]++;
    }
    for (std::uint32_t x = 0; x < n; x++)
        row_offsets[x + 1] += row_offsets[x];
    for (std::uint32_t x = 0; x < n; x++)
        fill[x] = row_offsets[x];
    std::vector<std::uint32_t> targets(row_offsets[n]);
    std::vector<double> cw(row_offsets[n]);
    for (std::size_t e = 0; e < u.size(); e++) {
        targets[fill[u[e]]] = v[e];
        cw[fill[u[e]]++] = w[e];
        if (u[e] != v[e]) {
            targets[fill[v[e]]] = u[e];
            cw[fill[v[e]]++] = w[e];
        }
    }
    const gpumst::Forest host_csr = gpumst::minimum_spanning_forest_csr(
        ctx, gpumst::Span<const std::uint64_t>(row_offsets), gpumst::Span<const std::uint32_t>(targets),
        gpumst::Span<const double>(cw));
    void *drow_offsets = device_copy(&d, row_offsets.data(), row_offsets.size() * 8);
    void *dtargets = device_copy(&d, targets.data(), targets.size() * 4);
    void *dcw = device_copy(&d, cw.data(), cw.size() * 8);
    const gpumst::DeviceForest csr_forest = gpumst::minimum_spanning_forest_csr_device(
        ctx, n, targets.size(), static_cast<const std::uint64_t *>(drow_offsets),
        static_cast<const std::uint32_t *>(dtargets), static_cast<const double *>(dcw),
        static_cast<std::uint64_t *>(ids));
    ASSERT_EQ(csr_forest.num_edges, host_csr.edges().size());
    std::vector<std::uint64_t> csr_got(csr_forest.num_edges);
    device_read(&d, ids, csr_got.data(), csr_got.size() * 8);
    EXPECT_EQ(csr_got, to_vector(host_csr.edges()));
    EXPECT_EQ(csr_forest.total_weight->value, host_csr.total_weight().value);
    cw[row_offsets[n / 2]] += 1.0; // one direction of one edge: no longer symmetric
    void *dbad = device_copy(&d, cw.data(), cw.size() * 8);
    EXPECT_TRUE(throws_error(
        [&] {
            gpumst::minimum_spanning_forest_csr_device(ctx, n, targets.size(),
                                                       static_cast<const std::uint64_t *>(drow_offsets),
                                                       static_cast<const std::uint32_t *>(dtargets),
                                                       static_cast<const double *>(dbad),
                                                       static_cast<std::uint64_t *>(ids));
        },
        gpumst::Status::InvalidGraph, {"CSR is not symmetric"}));
    for (void *mem : {drow_offsets, dtargets, dcw, dbad})
        device_free(&d, mem);

    std::vector<double> scanned(w.size()), expected(w.size());
    gpumst::scan_device(ctx, static_cast<const double *>(dw), static_cast<double *>(dw), w.size(),
                        gpumst::Op::Max, gpumst::Inclusive);
    device_read(&d, dw, scanned.data(), scanned.size() * 8);
    gpumst::scan(ctx, w, expected, gpumst::Op::Max, gpumst::Inclusive);
    EXPECT_EQ(scanned, expected);
    const std::vector<std::uint64_t> offsets = {0, 100, 100, 2500, u.size()};
    void *doffsets = device_copy(&d, offsets.data(), offsets.size() * 8);
    void *du_copy = device_copy(&d, u.data(), u.size() * 4);
    gpumst::segmented_scan_device(ctx, static_cast<const std::uint32_t *>(du_copy),
                                  static_cast<std::uint32_t *>(du_copy), u.size(),
                                  static_cast<const std::uint64_t *>(doffsets), offsets.size() - 1, gpumst::Op::Sum,
                                  gpumst::Exclusive);
    std::vector<std::uint32_t> segmented(u.size()), segmented_host(u.size());
    device_read(&d, du_copy, segmented.data(), segmented.size() * 4);
    gpumst::segmented_scan(ctx, u, segmented_host, gpumst::Span<const std::uint64_t>(offsets), gpumst::Op::Sum,
                           gpumst::Exclusive);
    EXPECT_EQ(segmented, segmented_host);
    device_free(&d, doffsets);
    // By head flags in device memory (any nonzero byte starts a segment), in place.
    std::vector<std::uint8_t> heads(u.size());
    for (std::size_t i = 0; i < heads.size(); i++)
        heads[i] = i % 301 == 3 ? static_cast<std::uint8_t>(1 + i % 100) : 0;
    void *dheads = device_copy(&d, heads.data(), heads.size());
    void *du_flagged = device_copy(&d, u.data(), u.size() * 4);
    gpumst::segmented_scan_device(ctx, static_cast<const std::uint32_t *>(du_flagged),
                                  static_cast<std::uint32_t *>(du_flagged), u.size(),
                                  static_cast<const std::uint8_t *>(dheads), gpumst::Op::Max, gpumst::Inclusive);
    device_read(&d, du_flagged, segmented.data(), segmented.size() * 4);
    gpumst::segmented_scan(ctx, u, segmented_host, gpumst::Span<const std::uint8_t>(heads), gpumst::Op::Max,
                           gpumst::Inclusive);
    EXPECT_EQ(segmented, segmented_host);
    device_free(&d, dheads);
    device_free(&d, du_flagged);
    device_free(&d, du_copy);
    const auto device_min = gpumst::argmin_device(ctx, static_cast<const std::uint32_t *>(du), u.size());
    const auto host_min = gpumst::argmin(ctx, u);
    EXPECT_EQ(device_min.value, host_min.value);
    EXPECT_EQ(device_min.index, host_min.index);
    const auto device_max = gpumst::argmax_device(ctx, static_cast<const std::uint32_t *>(du), u.size());
    const auto host_max = gpumst::argmax(ctx, u);
    EXPECT_EQ(device_max.value, host_max.value);
    EXPECT_EQ(device_max.index, host_max.index);
    // Per segment (one empty), in device memory, against the host's.
    const std::vector<std::uint64_t> arg_offsets = {0, 700, 700, u.size()};
    const std::size_t segments = arg_offsets.size() - 1;
    void *darg_offsets = device_copy(&d, arg_offsets.data(), arg_offsets.size() * 8);
    void *dvalues = device_copy(&d, nullptr, segments * 4);
    void *dindices = device_copy(&d, nullptr, segments * 8);
    std::vector<std::uint32_t> values(segments), host_values(segments);
    std::vector<std::uint64_t> indices(segments), host_indices(segments);
    for (bool maximum : {false, true}) {
        const auto *in = static_cast<const std::uint32_t *>(du);
        const auto *offs = static_cast<const std::uint64_t *>(darg_offsets);
        auto *vals = static_cast<std::uint32_t *>(dvalues);
        auto *idxs = static_cast<std::uint64_t *>(dindices);
        if (maximum) {
            gpumst::segmented_argmax_device(ctx, in, u.size(), offs, segments, vals, idxs);
            gpumst::segmented_argmax(ctx, u, gpumst::Span<const std::uint64_t>(arg_offsets), host_values,
                                     host_indices);
        } else {
            gpumst::segmented_argmin_device(ctx, in, u.size(), offs, segments, vals, idxs);
            gpumst::segmented_argmin(ctx, u, gpumst::Span<const std::uint64_t>(arg_offsets), host_values,
                                     host_indices);
        }
        device_read(&d, dvalues, values.data(), segments * 4);
        device_read(&d, dindices, indices.data(), segments * 8);
        EXPECT_EQ(values, host_values) << "maximum " << maximum;
        EXPECT_EQ(indices, host_indices) << "maximum " << maximum;
    }
    for (void *memory : {darg_offsets, dvalues, dindices})
        device_free(&d, memory);
    for (void *memory : {du, dv, dw, ids})
        device_free(&d, memory);
    device_close(&d);
}

// ContextOptions::device_memory_limit: a graph larger than the cap is solved a partition
// of the edges at a time, with the CPU tier's forest; one whose vertices leave no room
// under the cap is Status::OutOfMemory.
TEST(DeviceMemory, CappedOpenClGivesTheCpuForest)
{
    if (gpumst_test::quick())
        GTEST_SKIP() << "left out of the quick (valgrind) run: PoCL's kernel compiler under valgrind takes minutes";
    gpumst::ContextOptions options;
    options.tier = gpumst::Tier::OpenCL;
    options.device_memory_limit = 400000;
    std::optional<gpumst::Context> found;
    try {
        found.emplace(options);
    } catch (const gpumst::Error &e) {
        GTEST_SKIP() << "the OpenCL tier does not open here: " << e.what();
    }
    gpumst::Context cpu(gpumst::Tier::Cpu);
    const std::uint32_t n = 1000;
    std::vector<std::uint32_t> u, v, w;
    std::mt19937_64 random(5);
    for (int e = 0; e < 40000; e++) {
        u.push_back(static_cast<std::uint32_t>(random() % n));
        v.push_back(static_cast<std::uint32_t>(random() % n));
        w.push_back(static_cast<std::uint32_t>(random() % 40));
    }
    const gpumst::Forest expected = gpumst::minimum_spanning_forest(cpu, n, u, v, w);
    const gpumst::Forest capped = gpumst::minimum_spanning_forest(*found, n, u, v, w);
    EXPECT_EQ(to_vector(capped.edges()), to_vector(expected.edges()));
    EXPECT_TRUE(throws_error([&] { gpumst::minimum_spanning_forest(*found, 200000, u, v, w); },
                             Status::OutOfMemory, {"needs about"}));
}

// ContextOptions::devices: a forest split across devices (device 0 listed twice, as on
// PoCL in CI; the split threshold lowered so that a small graph is split) is the CPU
// tier's forest.
TEST(DeviceMemory, SplitAcrossListedDevicesGivesTheCpuForest)
{
    if (gpumst_test::quick())
        GTEST_SKIP() << "left out of the quick (valgrind) run: PoCL's kernel compiler under valgrind takes minutes";
    setenv("GPUMST_SPLIT_MIN_EDGES", "1000", 1);
    gpumst::ContextOptions options;
    options.tier = gpumst::Tier::OpenCL;
    options.devices = {0, 0};
    std::optional<gpumst::Context> found;
    try {
        found.emplace(options);
    } catch (const gpumst::Error &e) {
        GTEST_SKIP() << "the OpenCL tier does not open here: " << e.what();
    }
    EXPECT_EQ(found->device_count(), 2u);
    gpumst::Context cpu(gpumst::Tier::Cpu);
    const std::uint32_t n = 1000;
    std::vector<std::uint32_t> u, v;
    std::vector<float> w;
    std::mt19937_64 random(9);
    for (int e = 0; e < 40000; e++) {
        u.push_back(static_cast<std::uint32_t>(random() % n));
        v.push_back(static_cast<std::uint32_t>(random() % n));
        w.push_back(static_cast<float>(random() % 50) * 0.5f);
    }
    const gpumst::Forest expected = gpumst::minimum_spanning_forest(cpu, n, u, v, w);
    const gpumst::Forest split = gpumst::minimum_spanning_forest(*found, n, u, v, w);
    EXPECT_EQ(to_vector(split.edges()), to_vector(expected.edges()));
}
