#pragma once

#include <string>
#include <vector>

namespace fb::cli {

// The spoken-digits data set that resources/examples/spoken_digits.json trains on, made on this
// machine by make_spoken_digits.sh (espeak-ng, flite, festival and sox; nothing is downloaded) for
// `flowbench-cli make-data spoken-digits`.

// The script's voices, in the order FLOWBENCH_SPOKEN_DIGITS_VOICES counts them (espeak-ng's first
// 144, flite's and festival's 16, espeak-ng's other 144, the 240 made-up ones, then festival's 3
// that read their own script: Hindi, Telugu, Russian):
// test_cli checks that the script refuses one more.
inline constexpr int kSpokenDigitsVoices = 547;
inline constexpr int kSpokenDigitsEspeakVoices = 144;

struct SpokenDigitsRequest {
    std::string outDir; // empty: spokenDigitsDefaultDir()
    int voices = 0;     // only the first N of kSpokenDigitsVoices (tests, quick tries); 0 = all
};

struct SpokenDigitsOutcome {
    bool ok = false;
    bool stopped = false; // by SIGINT, SIGTERM or SIGHUP
    std::string path;     // the folder, absolute
    long recordings = 0;  // recordings in the folder afterwards
    std::string message;  // why not, when !ok
};

// ~/.local/share/flowbench/spoken_digits: the folder the example reads ("~" is $HOME); empty
// when $HOME is not set.
std::string spokenDigitsDefaultDir();

// make_spoken_digits.sh: installed, <bin>/../share/flowbench/ (beside the examples); in a build
// tree, the source tree's scripts/ (the build tree's CMakeCache.txt names the source tree, so
// no path is compiled in). Empty when neither is there; `looked` gets the places tried.
std::string findSpokenDigitsScript(std::vector<std::string> *looked = nullptr);

// The tools the script needs for that many voices (0 = all) that are not on the PATH
// ("espeak-ng", "sox"; flite and festival's text2wave past espeak-ng's voices).
std::vector<std::string> missingSpokenDigitsTools(int voices = 0);

// Runs the script: its progress ("spoken digits: made N of 19870") goes to stderr as it comes.
// SIGINT, SIGTERM or SIGHUP stop it; the recordings made are kept and a later call makes only
// the rest.
SpokenDigitsOutcome makeSpokenDigits(const SpokenDigitsRequest &request);

} // namespace fb::cli
