// A gpumst edge list (`gpumst convert G.egr G.el`: a `#` header naming the vertex count,
// then one `u v w` line per undirected edge) as GBBS's symmetric
// `WeightedAdjacencyGraph` text: the vertex count, the arc count, each vertex's first
// arc, the arcs' heads, then their weights, both directions of every edge listed.
// Self-loops are dropped (they are in no spanning forest). Weights are written as
// integers; GBBS reads them through a float, exact below 2^24 (every graph of
// cpu_vs_pbbs.sh).
//
//   to_gbbs G.el G.adj
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
    if (argc != 3) { std::fprintf(stderr, "usage: to_gbbs EDGES.el GRAPH.adj\n"); return 2; }
    FILE *in = std::fopen(argv[1], "r");
    if (!in) { std::perror(argv[1]); return 2; }
    std::vector<uint32_t> from, to;
    std::vector<int64_t> weight;
    uint64_t n = 0;
    char line[256];
    while (std::fgets(line, sizeof line, in)) {
        if (line[0] == '#') {
            // "# written by gpumst ...: N vertices, ..."
            const char *colon = std::strchr(line, ':');
            if (colon) n = std::strtoull(colon + 1, nullptr, 10);
            continue;
        }
        char *p = line, *end;
        uint64_t u = std::strtoull(p, &end, 10);
        if (end == p) continue;
        uint64_t v = std::strtoull(end, &p, 10);
        int64_t w = std::strtoll(p, &end, 10);
        if (end == p) { std::fprintf(stderr, "%s: no weight on line: %s", argv[1], line); return 2; }
        if (u >= n || v >= n) n = (u > v ? u : v) + 1;
        if (u == v) continue;
        from.push_back(uint32_t(u));
        to.push_back(uint32_t(v));
        weight.push_back(w);
    }
    std::fclose(in);
    // Counting sort of both directions by tail.
    std::vector<uint64_t> first(n + 1, 0);
    for (size_t e = 0; e < from.size(); e++) { first[from[e] + 1]++; first[to[e] + 1]++; }
    for (uint64_t x = 0; x < n; x++) first[x + 1] += first[x];
    const uint64_t arcs = first[n];
    std::vector<uint64_t> next(first.begin(), first.end() - 1);
    std::vector<uint32_t> head(arcs);
    std::vector<int64_t> arc_weight(arcs);
    for (size_t e = 0; e < from.size(); e++) {
        uint64_t a = next[from[e]]++, b = next[to[e]]++;
        head[a] = to[e], arc_weight[a] = weight[e];
        head[b] = from[e], arc_weight[b] = weight[e];
    }
    FILE *out = std::fopen(argv[2], "w");
    if (!out) { std::perror(argv[2]); return 2; }
    std::fprintf(out, "WeightedAdjacencyGraph\n%" PRIu64 "\n%" PRIu64 "\n", n, arcs);
    for (uint64_t x = 0; x < n; x++) std::fprintf(out, "%" PRIu64 "\n", first[x]);
    for (uint64_t a = 0; a < arcs; a++) std::fprintf(out, "%" PRIu32 "\n", head[a]);
    for (uint64_t a = 0; a < arcs; a++) std::fprintf(out, "%" PRId64 "\n", arc_weight[a]);
    if (std::fclose(out) != 0) { std::perror(argv[2]); return 2; }
    return 0;
}
