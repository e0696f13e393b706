// The command reader (core/exec/control: what `flowbench-cli run --events` reads on stdin, the
// window's pause, stop and learning-rate commands): any bytes as one line. Promises: a command
// or a rejection that says why; a learning rate, when given, is a finite positive number; the
// acknowledgement prints as JSON whatever bytes the line echoed.

#include "fuzz_common.h"

#include "core/exec/control.h"

#include <nlohmann/json.hpp>

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    const std::string line(reinterpret_cast<const char *>(data), size);
    const exec::ParsedCommand parsed = exec::parseCommand(line);
    exec::CommandAck ack;
    if (parsed.command) {
        if (parsed.command->kind == exec::Command::Kind::SetLr)
            FB_FUZZ_REQUIRE(std::isfinite(parsed.command->lr) && parsed.command->lr > 0,
                            "set_lr with lr " + std::to_string(parsed.command->lr));
        ack.command = parsed.command->name();
        ack.id = parsed.command->id;
    } else {
        ack = parsed.rejection;
        FB_FUZZ_REQUIRE(!ack.ok && !ack.message.empty(), "a rejection without a reason");
    }
    // The CLI prints a rejected command's name and message on stderr, where a person reads them:
    // nothing in them may hide or reorder text.
    for (const std::string &shown : {ack.command, ack.message}) {
        FB_FUZZ_REQUIRE(shown.find('\0') == std::string::npos, "NUL in: " + shown);
        FB_FUZZ_REQUIRE(shown.find('\x1b') == std::string::npos, "ESC in: " + shown);
        FB_FUZZ_REQUIRE(shown.find("\xe2\x80\xae") == std::string::npos, "U+202E in: " + shown);
    }
    // As app/cli/progress.cpp writes the ack event: bytes that are not UTF-8 are replaced.
    const nlohmann::json e{{"type", "ack"}, {"command", ack.command}, {"id", ack.id},
                           {"ok", ack.ok}, {"message", ack.message}};
    const std::string text = e.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    FB_FUZZ_REQUIRE(nlohmann::json::accept(text), "the ack does not read back as JSON");
    return 0;
}
