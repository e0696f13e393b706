// The pipeline reader (core/graph/pipeline_file, validate; core/exec/job): any bytes as a
// pipeline file. Promises: parsing answers with a document or an error; what validate() reports
// prints safely (no raw NUL, escape or right-to-left override); a parsed document written back
// reads again to the same text (save never loses or mangles the user's file); and a valid one
// becomes a training job or an error, never an exception.

#include "fuzz_common.h"

#include "core/exec/job.h"
#include "core/exec/node_type.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/validate.h"

#include <string_view>

namespace {

void requirePrintable(const std::string &text)
{
    FB_FUZZ_REQUIRE(text.find('\0') == std::string::npos, "NUL in: " + text);
    FB_FUZZ_REQUIRE(text.find('\x1b') == std::string::npos, "ESC in: " + text);
    FB_FUZZ_REQUIRE(text.find("\xe2\x80\xae") == std::string::npos, "U+202E in: " + text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    auto doc = graph::parsePipeline(text, "fuzz.json");
    if (!doc.ok()) {
        FB_FUZZ_REQUIRE(!doc.error().message.empty(), "an error without a message");
        requirePrintable(doc.error().str());
        return 0;
    }
    const std::vector<Error> problems = graph::validate(doc.value(), exec::nodeTypes());
    for (const Error &e : problems)
        requirePrintable(e.str());

    const std::string once = graph::serializePipeline(doc.value());
    auto again = graph::parsePipeline(once, "again.json");
    FB_FUZZ_REQUIRE(again.ok(), "the saved document does not read back: " +
                                    (again.ok() ? std::string() : again.error().str()));
    FB_FUZZ_REQUIRE(graph::serializePipeline(again.value()) == once,
                    "saving the read-back document changes it");
    FB_FUZZ_REQUIRE(graph::validate(again.value(), exec::nodeTypes()).size() == problems.size(),
                    "the saved document validates differently");

    if (problems.empty()) {
        auto job = exec::readTrainingJob(doc.value());
        if (!job.ok()) requirePrintable(job.error().str());
    }
    return 0;
}
