#include "app/cli/spoken_digits.h"

#include "app/cli/install_paths.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace fb::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char *kScript = "make_spoken_digits.sh";
// The Debian packages that give every tool and voice the script uses: its own list
// (`make_spoken_digits.sh --packages`, read when CMake configures).
constexpr const char *kPackages = FLOWBENCH_SPOKEN_DIGITS_PACKAGES;

volatile sig_atomic_t g_child = 0;   // the script's process id while it runs
volatile sig_atomic_t g_stopped = 0; // a stop signal came

// Passes a stop on to the script, whose own trap stops it tidily; this process waits for that.
void onStopSignal(int)
{
    g_stopped = 1;
    if (g_child > 0) kill(pid_t(g_child), SIGTERM);
}

bool onPath(const std::string &tool)
{
    const char *path = std::getenv("PATH");
    std::string_view rest = path ? path : "";
    while (true) {
        const size_t colon = rest.find(':');
        const std::string dir(rest.substr(0, colon));
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + tool;
        if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return true;
        if (colon == std::string_view::npos) return false;
        rest.remove_prefix(colon + 1);
    }
}

// Recordings in the folder: {digit}_{speaker}_{take}.wav, not the .tmp.wav being written.
long countRecordings(const fs::path &dir)
{
    long n = 0;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && name.ends_with(".wav") && !name.ends_with(".tmp.wav") &&
            std::count(name.begin(), name.end(), '_') >= 2)
            ++n;
    }
    return n;
}

std::string joinedWithAnd(const std::vector<std::string> &items)
{
    std::string out;
    for (size_t i = 0; i < items.size(); ++i)
        out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    return out;
}

} // namespace

std::string spokenDigitsDefaultDir()
{
    const char *home = std::getenv("HOME");
    if (!home || !*home) return {};
    return std::string(home) + "/.local/share/flowbench/spoken_digits";
}

std::string findSpokenDigitsScript(std::vector<std::string> *looked)
{
    return findShippedFile(kScript, std::string("scripts/") + kScript, looked);
}

std::vector<std::string> missingSpokenDigitsTools(int voices)
{
    std::vector<std::string> missing;
    if (!onPath("espeak-ng")) missing.push_back("espeak-ng");
    if (voices == 0 || voices > kSpokenDigitsEspeakVoices) {
        if (!onPath("flite")) missing.push_back("flite");
        if (!onPath("text2wave")) missing.push_back("festival");
    }
    if (!onPath("sox")) missing.push_back("sox");
    // soxi comes with sox; named on its own only when sox is there without it.
    if (missing.empty() && !onPath("soxi")) missing.push_back("soxi (part of sox)");
    return missing;
}

SpokenDigitsOutcome makeSpokenDigits(const SpokenDigitsRequest &request)
{
    SpokenDigitsOutcome outcome;
    std::string out = request.outDir.empty() ? spokenDigitsDefaultDir() : request.outDir;
    if (out.empty()) {
        outcome.message = "$HOME is not set: name the folder with --out DIR";
        return outcome;
    }
    outcome.path = fs::absolute(out).lexically_normal().string();
    if (outcome.path.size() > 1 && outcome.path.ends_with('/')) outcome.path.pop_back();

    if (const auto missing = missingSpokenDigitsTools(request.voices); !missing.empty()) {
        outcome.message = joinedWithAnd(missing) + (missing.size() == 1 ? " is" : " are") +
                          " missing: the recordings are spoken by espeak-ng, flite and festival "
                          "and mixed by sox; install them with: sudo apt install " +
                          kPackages;
        return outcome;
    }
    std::vector<std::string> looked;
    const std::string script = findSpokenDigitsScript(&looked);
    if (script.empty()) {
        outcome.message = std::string(kScript) + " was not found; looked at:";
        for (const std::string &l : looked)
            outcome.message += " " + l;
        return outcome;
    }

    // Set here, not in the child: between fork and exec only async-signal-safe calls are allowed.
    if (request.voices > 0)
        setenv("FLOWBENCH_SPOKEN_DIGITS_VOICES", std::to_string(request.voices).c_str(), 1);
    // flowbench-speak, which makes the recordings in one process (app/speak), is beside this
    // program in a build tree, whatever its folder: the source tree's script is told so, unless
    // the person already chose. (Installed, the script finds <prefix>/lib/flowbench itself.)
    if (!std::getenv("FLOWBENCH_SPEAK")) {
        const fs::path speak = fs::path(executablePath()).parent_path() / "flowbench-speak";
        if (access(speak.c_str(), X_OK) == 0) setenv("FLOWBENCH_SPEAK", speak.c_str(), 1);
    }
    std::fprintf(stderr, "making the spoken-digits data set with %s\n", script.c_str());
    std::fflush(stderr);

    constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction previous[3] = {};
    struct sigaction sa = {};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i)
        sigaction(kStopSignals[i], &sa, &previous[i]);
    g_stopped = 0;

    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child == 0) {
        // The script ends with this process, also when it is killed outright (SIGKILL).
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127);
        dup2(STDERR_FILENO, STDOUT_FILENO); // stdout is for the one JSON line of the contract
        execlp("bash", "bash", script.c_str(), outcome.path.c_str(), static_cast<char *>(nullptr));
        _exit(127);
    }
    int status = 0;
    if (child < 0) {
        outcome.message = std::string("cannot start bash: ") + std::strerror(errno);
    } else {
        g_child = child;
        if (g_stopped) kill(child, SIGTERM); // a stop that came before the child was known
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        g_child = 0;
    }
    for (int i = 0; i < 3; ++i)
        sigaction(kStopSignals[i], &previous[i], nullptr);
    if (child < 0) return outcome;

    outcome.recordings = countRecordings(outcome.path);
    if (g_stopped) {
        outcome.stopped = true;
        outcome.message = "stopped with " + std::to_string(outcome.recordings) +
                          " recordings made; they are kept, and making the data set again "
                          "makes only the rest";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        outcome.ok = true;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        outcome.message = "bash could not run " + script;
    } else {
        outcome.message = script + " failed (" +
                          (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                             : "signal " + std::to_string(WTERMSIG(status))) +
                          "; its messages are above)";
    }
    return outcome;
}

} // namespace fb::cli
