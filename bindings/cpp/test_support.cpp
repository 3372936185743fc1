#include "test_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#ifndef GPUMST_SOURCE_DIR
#error "compile with -DGPUMST_SOURCE_DIR=\"<the gpumst source tree>\" (the sample data lives there)"
#endif

namespace gpumst_test {
namespace {

struct TierChoice {
    gpumst::Tier tier = gpumst::Tier::Cpu;
    std::string error;  // a GPUMST_TEST_TIER value that names no tier
};

TierChoice parse_tier()
{
    const char *text = std::getenv("GPUMST_TEST_TIER");
    const std::string name = text != nullptr ? text : "cpu";
    TierChoice choice;
    if (name == "cpu" || name.empty())
        choice.tier = gpumst::Tier::Cpu;
    else if (name == "opencl")
        choice.tier = gpumst::Tier::OpenCL;
    else if (name == "cuda")
        choice.tier = gpumst::Tier::Cuda;
    else if (name == "auto")
        choice.tier = gpumst::Tier::Auto;
    else
        choice.error = "GPUMST_TEST_TIER='" + name + "' is not one of cpu, opencl, cuda, auto";
    return choice;
}

// Opens the context before the first test and closes it after the last, inside main, so
// that valgrind and LeakSanitizer see it released.
class ContextEnvironment : public ::testing::Environment {
public:
    void SetUp() override
    {
        const TierChoice choice = parse_tier();
        if (!choice.error.empty()) {
            failure_ = choice.error;
            return;
        }
        try {
            gpumst::ContextOptions options;
            options.tier = choice.tier;
            ctx_ = std::make_unique<gpumst::Context>(options);
            std::printf("gpumst C++ tests: tier %s, device \"%s\", library %s\n", to_string(ctx_->tier()),
                        ctx_->device_name().c_str(), gpumst::version().c_str());
        } catch (const gpumst::Error &e) {
            std::ostringstream why;
            why << "the " << to_string(choice.tier) << " tier does not open here: " << e.what();
            if (e.status() == gpumst::Status::BackendUnavailable) {
                unavailable_ = why.str();
                std::printf("gpumst C++ tests: %s\nThe tests that need a context are skipped.\n", unavailable_.c_str());
            } else {
                failure_ = why.str();
            }
        }
    }
    void TearDown() override { ctx_.reset(); }

    gpumst::Context *ctx() const { return ctx_.get(); }
    const std::string &unavailable() const { return unavailable_; }
    const std::string &failure() const { return failure_; }

private:
    std::unique_ptr<gpumst::Context> ctx_;
    std::string unavailable_;  // skip: the tier is missing on this machine
    std::string failure_;      // fail: anything else
};

// GoogleTest owns registered environments and runs them around all tests.
ContextEnvironment *const environment =
    static_cast<ContextEnvironment *>(::testing::AddGlobalTestEnvironment(new ContextEnvironment));

}  // namespace

gpumst::Tier tier_under_test() { return parse_tier().tier; }

void ContextTest::SetUp()
{
    if (!environment->failure().empty())
        FAIL() << environment->failure();
    if (environment->ctx() == nullptr)
        GTEST_SKIP() << environment->unavailable();
    ctx_ = environment->ctx();
}

std::string source_path(const std::string &relative)
{
    const char *dir = std::getenv("GPUMST_SOURCE_DIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : GPUMST_SOURCE_DIR) + "/" + relative;
}

bool quick()
{
    const char *value = std::getenv("GPUMST_TEST_QUICK");
    return value != nullptr && std::string(value) == "1";
}

}  // namespace gpumst_test
