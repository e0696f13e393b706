// The run-log reader of the window (widgets/run/run_record: File > Open Run Log, and the
// evaluation view's decoding of `evaluation` events): any bytes as a .jsonl file. Promises: the
// events, or an error naming the file (and the line); every evaluation event decodes or is
// refused with a message; never an exception.

#include "fuzz_common.h"

#include "widgets/evaluation/evaluation_data.h"
#include "widgets/run/event_fields.h"
#include "widgets/run/run_record.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    const std::string path = fbfuzz::inputFile(data, size, ".jsonl");
    auto events = widgets::RunRecord::load(QString::fromStdString(path));
    if (!events.ok()) {
        FB_FUZZ_REQUIRE(events.error().file == path, "the error does not name the file: " +
                                                         events.error().str());
        return 0;
    }
    FB_FUZZ_REQUIRE(!events->empty(), "an empty run log was accepted");
    for (const nlohmann::json &e : *events) {
        FB_FUZZ_REQUIRE(e.is_object(), "an event that is not an object");
        if (widgets::eventString(e, "type") != "evaluation") continue;
        auto ev = widgets::parseEvaluation(e);
        if (!ev.ok()) {
            FB_FUZZ_REQUIRE(!ev.error().message.empty(), "a refusal without a message");
            continue;
        }
        const size_t n = size_t(ev->classCount());
        FB_FUZZ_REQUIRE(ev->confusion.size() == n * n, "the confusion matrix is not classes^2");
        for (const auto &m : ev->misclassified)
            FB_FUZZ_REQUIRE(m.trueClass >= 0 && m.trueClass < int(n) && m.predicted >= 0 &&
                                m.predicted < int(n),
                            "a misclassified sample names a class that does not exist");
    }
    return 0;
}
