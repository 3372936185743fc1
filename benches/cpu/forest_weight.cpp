// Total weight of a forest that PBBS's MST wrote: its output file lists indices into
// the input's edge array (`sequenceInt` then one index per line); the input is PBBS's
// `WeightedEdgeArray` text (u v w triples). Weights are summed as integers when every
// one is integral (as in every graph of cpu_vs_pbbs.sh), so the total compares exactly
// with gpumst's.
//
//   forest_weight EDGES.pbbs FOREST.ids
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static std::vector<char> slurp(const char *path) {
    FILE *f = std::fopen(path, "rb");
    if (!f) { std::perror(path); std::exit(2); }
    std::vector<char> data;
    char buffer[1 << 16];
    size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, f)) > 0) data.insert(data.end(), buffer, buffer + got);
    std::fclose(f);
    data.push_back('\0');
    return data;
}

int main(int argc, char **argv) {
    if (argc != 3) { std::fprintf(stderr, "usage: forest_weight EDGES.pbbs FOREST.ids\n"); return 2; }
    std::vector<char> edges = slurp(argv[1]);
    char *p = edges.data();
    if (std::strncmp(p, "WeightedEdgeArray", 17) != 0) { std::fprintf(stderr, "%s: not a WeightedEdgeArray\n", argv[1]); return 2; }
    p += 17;
    std::vector<double> weight;
    for (;;) {
        char *end;
        std::strtol(p, &end, 10);  // u
        if (end == p) break;
        std::strtol(end, &p, 10);  // v
        weight.push_back(std::strtod(p, &end));
        p = end;
    }
    std::vector<char> ids = slurp(argv[2]);
    char *q = ids.data();
    if (std::strncmp(q, "sequenceInt", 11) != 0) { std::fprintf(stderr, "%s: not a sequenceInt\n", argv[2]); return 2; }
    q += 11;
    long long integral = 0;
    double real = 0;
    bool all_integral = true;
    long count = 0;
    for (;;) {
        char *end;
        long i = std::strtol(q, &end, 10);
        if (end == q) break;
        q = end;
        if (i < 0 || (size_t)i >= weight.size()) { std::fprintf(stderr, "edge index %ld out of range\n", i); return 1; }
        double w = weight[i];
        real += w;
        if (w == (double)(long long)w) integral += (long long)w; else all_integral = false;
        count++;
    }
    if (all_integral) std::printf("%ld %lld\n", count, integral);
    else std::printf("%ld %.17g\n", count, real);
    return 0;
}
