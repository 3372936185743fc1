#include <gpumst.hpp>
#include <iostream>
#include <vector>

int main()
{
    try {
        gpumst::Context ctx;  // CUDA, else an OpenCL GPU, else all CPU cores
        // A square 0-1-2-3 with the diagonal 0-2: edge i joins u[i] and v[i], weighing w[i].
        std::vector<std::uint32_t> u = {0, 1, 2, 3, 0}, v = {1, 2, 3, 0, 2};
        std::vector<double> w = {1.0, 2.5, 1.0, 3.0, 2.0};
        gpumst::Forest forest = gpumst::minimum_spanning_forest(ctx, 4, u, v, w);
        std::cout << gpumst::to_string(ctx.tier()) << ": weight " << forest.total_weight_string() << ", edges";
        for (std::uint64_t id : forest.edges())
            std::cout << ' ' << id;
        std::cout << '\n';  // cpu: weight 4, edges 0 2 4
    } catch (const gpumst::Error &e) {  // e.status(): which gpumst::Status
        std::cerr << "gpumst: " << e.what() << '\n';
        return 1;
    }
}
