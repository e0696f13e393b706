#include "app/cli/lr_find.h"

#include "app/cli/cli_common.h"
#include "app/cli/install_paths.h"
#include "core/base/safe_text.h"
#include "core/exec/node_type.h"
#include "core/exec/runner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace fb::cli {

using nlohmann::json;

namespace {

const char *kUsage = R"(Usage: flowbench-cli lr-find PIPELINE [--min LR] [--max LR] [--steps N]
                               [--set NODE.PARAM=VALUE]... [--threads N] [--device D] [--json]

The learning-rate range test: trains from the initial weights for N steps (default 100) with the
learning rate growing geometrically from --min (default 1e-6) to --max (default 1), whatever
the optimizer's schedule, and stops early where the loss diverges. Prints the rate where the
smoothed loss falls fastest (the suggestion) and where it is lowest; changes nothing and writes
no files. PIPELINE - reads the pipeline from stdin. --json: one JSON object with every point.
Exit 0, 1 when the test could not run, 2 for bad input.
)";

class Collector : public exec::RunObserver {
public:
    std::vector<double> lrs, losses;
    void stepFinished(int64_t, float lr, float loss) override
    {
        lrs.push_back(lr);
        losses.push_back(loss);
    }
    void message(LogLevel level, const std::string &text) override
    {
        if (level >= LogLevel::Warning) std::fprintf(stderr, "%s\n", safeText(text).c_str());
    }
};

struct LrSuggestion {
    double suggested = 0; // where the smoothed loss falls fastest, before its lowest point
    double lowest = 0;    // where the smoothed loss is lowest
    std::vector<double> smoothed;
};
// From (rate, loss) points in rising rate: the losses smoothed by a centred moving average, and
// the rates above.
LrSuggestion suggestLearningRate(const std::vector<double> &lrs, const std::vector<double> &losses)
{
    LrSuggestion s;
    // The losses up to the first one that is not finite (the divergence), smoothed by a moving
    // average centred on each step: with every point known, a centred window does not lag
    // behind the rising rate as an exponential average would (fastai's 0.98 EMA shifts the
    // curve, and so the suggestion, towards higher rates).
    size_t n = 0;
    while (n < losses.size() && std::isfinite(losses[n]))
        ++n;
    if (n == 0) return s;
    const size_t half = std::max<size_t>(2, n / 40);
    for (size_t i = 0; i < n; ++i) {
        const size_t lo = i >= half ? i - half : 0, hi = std::min(n - 1, i + half);
        double sum = 0;
        for (size_t j = lo; j <= hi; ++j)
            sum += losses[j];
        s.smoothed.push_back(sum / double(hi - lo + 1));
    }
    size_t lowest = 0;
    for (size_t i = 1; i < n; ++i)
        if (s.smoothed[i] < s.smoothed[lowest]) lowest = i;
    s.lowest = lrs[lowest];
    // The steepest fall of the smoothed loss against log(rate), before its lowest point
    // (fastai's "steep" suggestion), by central differences.
    double steepest = 0;
    s.suggested = lrs[lowest] / 10;
    for (size_t i = 1; i + 1 < n && i <= lowest; ++i) {
        const double dx = std::log(lrs[i + 1]) - std::log(lrs[i - 1]);
        if (dx <= 0) continue;
        const double g = (s.smoothed[i + 1] - s.smoothed[i - 1]) / dx;
        if (g < steepest) {
            steepest = g;
            s.suggested = lrs[i];
        }
    }
    return s;
}

} // namespace

int lrFind(int argc, char **argv)
{
    std::string pipeline;
    std::vector<std::string> settings;
    exec::RunOptions options;
    options.lrRange.steps = 100;
    bool asJson = false;
    auto usage = [](const std::string &why) {
        std::fprintf(stderr, "flowbench-cli lr-find: %s\n\n%s", safeText(why).c_str(), kUsage);
        return kExitBadInput;
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--json") {
            asJson = true;
            continue;
        }
        const bool takesValue = a == "--min" || a == "--max" || a == "--steps" || a == "--set" ||
                                a == "--threads" || a == "--device";
        if (takesValue && i + 1 >= argc) return usage(a + " needs a value");
        const char *v = takesValue ? argv[++i] : nullptr;
        char *end = nullptr;
        if (a == "--min" || a == "--max") {
            const double d = std::strtod(v, &end);
            if (!end || *end || !(d > 0) || !std::isfinite(d))
                return usage(a + " needs a learning rate above 0, not '" + v + "'");
            (a == "--min" ? options.lrRange.lrMin : options.lrRange.lrMax) = d;
        } else if (a == "--steps" || a == "--threads") {
            const long n = std::strtol(v, &end, 10);
            const long max = a == "--steps" ? 100000 : 1024;
            if (!end || *end || n < (a == "--steps" ? 5 : 1) || n > max)
                return usage(a + " needs a whole number" +
                             (a == "--steps" ? " from 5" : " from 1") + ", not '" + v + "'");
            if (a == "--steps")
                options.lrRange.steps = n;
            else
                options.threads = int(n);
        } else if (a == "--set") {
            settings.push_back(v);
        } else if (a == "--device") {
            options.device = v;
        } else if (a.starts_with("--") || !pipeline.empty()) {
            return usage("unexpected argument " + a);
        } else {
            pipeline = a;
        }
    }
    if (pipeline.empty()) return usage("which pipeline?");
    if (options.lrRange.lrMin >= options.lrRange.lrMax) return usage("--min must be below --max");
    if (pipeline != "-") pipeline = resolvePipelineArgument(pipeline);
    options.pipelineName = pipeline;

    // With --json, the error object on stdout; for people, the error on stderr.
    auto fail = [&](int code, const Error &e, bool printed = false) {
        if (asJson)
            std::cout << jsonLine(json{{"status", "error"}, {"error", errorJson(e)}}) << std::endl;
        if (!printed) std::fprintf(stderr, "%s\n", safeText(e.str()).c_str());
        return code;
    };
    std::vector<Error> problems;
    auto doc = loadAndValidate(pipeline, settings, problems);
    if (!doc) {
        printProblems(problems);
        return fail(kExitBadInput, doc.error(), true);
    }

    // The optimizer whose rate is tested: what the suggestion is for.
    std::string optimizerNode;
    json currentLr;
    for (const graph::Node &n : doc->nodes()) {
        const graph::NodeTypeSpec *spec = exec::nodeTypes().find(n.type);
        if (spec && spec->role == graph::NodeRole::Optimizer && spec->param("lr")) {
            optimizerNode = n.id;
            currentLr = n.params.contains("lr") ? n.params["lr"] : spec->param("lr")->defaultValue;
        }
    }

    std::fprintf(stderr, "lr-find: %lld steps, learning rate %g to %g\n",
                 (long long)options.lrRange.steps, options.lrRange.lrMin, options.lrRange.lrMax);
    Collector collector;
    const Result<exec::RunSummary> result =
        runCatching([&] { return exec::runPipeline(doc.value(), options, collector); });
    if (!result) return fail(kExitFailed, result.error());
    if (collector.losses.size() < 3)
        return fail(kExitFailed,
                    makeError("the loss diverged at once, at a learning rate of " +
                              std::to_string(options.lrRange.lrMin) + ": try a lower --min"));

    const LrSuggestion s = suggestLearningRate(collector.lrs, collector.losses);
    json points = json::array();
    for (size_t i = 0; i < collector.lrs.size(); ++i) {
        json p{collector.lrs[i],
               std::isfinite(collector.losses[i]) ? json(collector.losses[i]) : json(nullptr)};
        p.push_back(i < s.smoothed.size() ? json(s.smoothed[i]) : json(nullptr));
        points.push_back(p);
    }
    const bool diverged = result->diverged;
    json out{{"status", "ok"},
             {"optimizer", optimizerNode},
             {"current_lr", currentLr},
             {"steps", collector.lrs.size()},
             {"min_lr", options.lrRange.lrMin},
             {"max_lr", options.lrRange.lrMax},
             {"suggested_lr", s.suggested},
             {"lowest_loss_lr", s.lowest},
             {"diverged_at", diverged ? json(collector.lrs.back()) : json(nullptr)},
             {"points", points}};
    if (asJson) {
        std::cout << jsonLine(out) << std::endl;
    } else {
        std::printf("%zu steps, learning rate %.3g to %.3g%s\n", collector.lrs.size(),
                    collector.lrs.front(), collector.lrs.back(),
                    diverged ? " (the loss diverged there)" : "");
        std::printf("the smoothed loss was lowest at %.3g\n", s.lowest);
        std::printf("suggested learning rate: %.3g (where the loss falls fastest)\n", s.suggested);
        if (!optimizerNode.empty())
            std::printf("%s.lr is %s now; nothing was changed\n", optimizerNode.c_str(),
                        currentLr.dump().c_str());
    }
    return kExitOk;
}

} // namespace fb::cli
