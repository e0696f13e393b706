// flowbench-speak: makes the spoken-digits data set's recordings in one process.
//
// scripts/make_spoken_digits.sh decides what each recording is (voice, speed, pitch, a
// microphone and room as sox effects, a noise floor) and used to make it with one espeak-ng and
// three sox processes, plus a mv: at 4 ms a fork and 10 to 40 ms for each to start, that was
// most of the data set's time. This program takes the same recipes, one a line on stdin, and
// does the same work through the same libraries in process: libespeak-ng for the voice, libsox
// for the effects (the very effect implementations, parsed by sox's own option parsers), so a
// recording is what the commands made.
//
// A recipe is one line of tab-separated fields, keywords followed by their values:
//   out PATH                      the WAV file to make (16 kHz, mono, 16-bit); it is written to
//                                 PATH.tmp.wav and renamed when complete
//   espeak VOICE SPEED PITCH TEXT the source: espeak-ng -v VOICE -s SPEED -p PITCH TEXT
//   file PATH                     the source: a sound file
//   silence                       no source (`sox -n`: the effects must make the sound, e.g. synth)
//   noise COLOUR LEVEL            then mix in a noise floor as long as the result: sox's synth
//                                 COLOUR noise at 48 kHz, scaled by LEVEL, brought to 16 kHz
//   effects EFFECT ARG ...        sox effects and their arguments, as on sox's command line; the
//                                 rest of the line
// A recipe that fails says why on stderr ("flowbench-speak: PATH: why"), the others go on, and
// the exit status is 1. SIGTERM, SIGINT and SIGHUP let the recording in hand finish, then end
// the program.
//
// Why not the commands: see above; why not our own DSP: sox's tempo, pitch, reverb and filters
// are what the data set was made and measured with (docs/audio.md), and libsox is sox.

#include <espeak-ng/speak_lib.h>
#include <sox.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
// --repeatable: as sox -R, every sox step draws its random numbers (noise, dither) as a new
// `sox -R` would, so that the recordings are the commands' bit for bit (the tests compare them).
// Otherwise the random numbers run on from a seed of the time, as sox's do from run to run.
bool g_repeatable = false;

void onSignal(int)
{
    g_stop = true;
}

constexpr double kRate = 16000.0;

std::vector<std::string> splitTabs(const std::string &line)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        size_t tab = line.find('\t', start);
        out.push_back(
            line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
    }
    return out;
}

struct Recipe {
    std::string out;
    enum class Source { None, Espeak, File } source = Source::None;
    std::string voice, text, file;
    int speed = 0, pitch = 0;
    std::string noiseColour;
    std::string noiseLevel;
    std::vector<std::string> effects;
};

// Parses a recipe line; an error message on failure.
std::optional<std::string> parse(const std::string &line, Recipe &r)
{
    const std::vector<std::string> f = splitTabs(line);
    bool sourceSeen = false;
    for (size_t i = 0; i < f.size();) {
        const std::string &key = f[i];
        auto need = [&](size_t n) { return i + n < f.size(); };
        if (key == "out" && need(1)) {
            r.out = f[i + 1];
            i += 2;
        } else if (key == "espeak" && need(4)) {
            r.source = Recipe::Source::Espeak;
            r.voice = f[i + 1];
            r.speed = std::atoi(f[i + 2].c_str());
            r.pitch = std::atoi(f[i + 3].c_str());
            r.text = f[i + 4];
            sourceSeen = true;
            i += 5;
        } else if (key == "file" && need(1)) {
            r.source = Recipe::Source::File;
            r.file = f[i + 1];
            sourceSeen = true;
            i += 2;
        } else if (key == "silence") {
            r.source = Recipe::Source::None;
            sourceSeen = true;
            i += 1;
        } else if (key == "noise" && need(2)) {
            r.noiseColour = f[i + 1];
            r.noiseLevel = f[i + 2];
            i += 3;
        } else if (key == "effects") {
            r.effects.assign(f.begin() + std::ptrdiff_t(i) + 1, f.end());
            break;
        } else {
            return "unknown or incomplete field '" + key + "'";
        }
    }
    if (r.out.empty()) return std::string("no 'out PATH'");
    if (!sourceSeen) return std::string("no source ('espeak', 'file' or 'silence')");
    return std::nullopt;
}

// espeak-ng's samples for one recipe, at its own rate (22050 Hz), as the espeak-ng command makes
// them with -w: the same calls in the same order (voice, then rate and pitch, then synthesis of
// the text with phonemes in [[ ]] and the pause at the end).
std::vector<short> *g_samples = nullptr;

int collect(short *wav, int n, espeak_EVENT *)
{
    if (wav && n > 0 && g_samples) g_samples->insert(g_samples->end(), wav, wav + n);
    return 0;
}

std::optional<std::string> speakHere(const Recipe &r, std::vector<short> &samples)
{
    if (espeak_SetVoiceByName(r.voice.c_str()) != EE_OK)
        return "espeak-ng has no voice '" + r.voice + "'";
    if (r.speed > 0) espeak_SetParameter(espeakRATE, r.speed, 0);
    if (r.pitch >= 0) espeak_SetParameter(espeakPITCH, r.pitch, 0);
    samples.clear();
    g_samples = &samples;
    const unsigned flags = espeakCHARS_AUTO | espeakPHONEMES | espeakENDPAUSE;
    espeak_ERROR e = espeak_Synth(r.text.c_str(), r.text.size() + 1, 0, POS_CHARACTER, 0, flags,
                                  nullptr, nullptr);
    if (e == EE_OK) e = espeak_Synchronize();
    g_samples = nullptr;
    if (e != EE_OK) return "espeak-ng could not say '" + r.text + "'";
    return std::nullopt;
}

// espeak-ng keeps state from one text to the next (its voice's wave generator: the same word said
// second comes out different), and has no call that resets it; nor can it be started again in a
// process (espeak_Terminate, then espeak_Initialize, hangs). So each recording is said by a
// child forked from this process as espeak-ng left it just started, which is what the espeak-ng
// command is when it says a word: the same samples, for a fork instead of a program's start.
std::optional<std::string> speak(const Recipe &r, std::vector<short> &samples)
{
    // Loading a voice (its language's dictionary and rules) is most of a child's work: done here
    // once for the children that follow, as long as the voice stays the same. A child setting
    // the voice again starts from where espeak-ng would after setting it.
    static std::string loaded;
    if (loaded != r.voice) {
        if (espeak_SetVoiceByName(r.voice.c_str()) != EE_OK)
            return "espeak-ng has no voice '" + r.voice + "'";
        loaded = r.voice;
    }
    int fds[2];
    if (pipe(fds) != 0) return std::string("no pipe for espeak-ng");
    const pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return std::string("cannot fork for espeak-ng");
    }
    if (child == 0) {
        close(fds[0]);
        std::vector<short> said;
        const std::optional<std::string> error = speakHere(r, said);
        // The child's answer: 0 and the samples, or 1 and the message.
        std::string bytes(1, error ? '\1' : '\0');
        if (error)
            bytes += *error;
        else
            bytes.append(reinterpret_cast<const char *>(said.data()), said.size() * sizeof(short));
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = write(fds[1], bytes.data() + done, bytes.size() - done);
            if (n <= 0) _exit(1);
            done += static_cast<size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string bytes;
    char block[65536];
    ssize_t n;
    while ((n = read(fds[0], block, sizeof block)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        bytes.append(block, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (bytes.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "espeak-ng failed saying '" + r.text + "'";
    if (bytes[0] != 0) return bytes.substr(1);
    samples.resize((bytes.size() - 1) / sizeof(short));
    std::memcpy(samples.data(), bytes.data() + 1, samples.size() * sizeof(short));
    return std::nullopt;
}

// A WAV file in memory: the samples espeak-ng gave, for libsox to read as it read espeak-ng's
// file (the same header espeak-ng writes: 16-bit mono PCM).
std::vector<char> wavInMemory(const std::vector<short> &samples, int rate)
{
    const uint32_t data = static_cast<uint32_t>(samples.size() * 2);
    std::vector<char> w(44 + data);
    auto put32 = [&](size_t at, uint32_t v) { std::memcpy(&w[at], &v, 4); };
    auto put16 = [&](size_t at, uint16_t v) { std::memcpy(&w[at], &v, 2); };
    std::memcpy(&w[0], "RIFF", 4);
    put32(4, 36 + data);
    std::memcpy(&w[8], "WAVEfmt ", 8);
    put32(16, 16);
    put16(20, 1);
    put16(22, 1);
    put32(24, static_cast<uint32_t>(rate));
    put32(28, static_cast<uint32_t>(rate * 2));
    put16(32, 2);
    put16(34, 16);
    std::memcpy(&w[36], "data", 4);
    put32(40, data);
    std::memcpy(&w[44], samples.data(), data);
    return w;
}

// One libsox effect, from its name and arguments as sox's command line takes them.
std::optional<std::string> addEffect(sox_effects_chain_t *chain,
                                     const std::vector<std::string> &words,
                                     sox_signalinfo_t *signal, const sox_signalinfo_t *outSignal)
{
    const sox_effect_handler_t *handler = sox_find_effect(words[0].c_str());
    if (!handler) return "sox has no effect '" + words[0] + "'";
    sox_effect_t *e = sox_create_effect(handler);
    // sox's option parsers take char*; they only read the words (kept alive by the caller).
    std::vector<char *> argv;
    for (size_t i = 1; i < words.size(); ++i)
        argv.push_back(const_cast<char *>(words[i].c_str()));
    if (sox_effect_options(e, static_cast<int>(argv.size()), argv.data()) != SOX_SUCCESS) {
        std::free(e);
        std::string all;
        for (const auto &w : words)
            all += (all.empty() ? "" : " ") + w;
        return "sox effect '" + all + "' has wrong arguments";
    }
    const int rc = sox_add_effect(chain, e, signal, outSignal);
    std::free(e);
    if (rc != SOX_SUCCESS) return "sox could not start effect '" + words[0] + "'";
    return std::nullopt;
}

// Splits sox effect words into effects: a word that names an effect starts a new one (as sox's
// command line reads them; no effect argument here is an effect's name).
std::vector<std::vector<std::string>> effectList(const std::vector<std::string> &words)
{
    std::vector<std::vector<std::string>> out;
    for (const auto &w : words) {
        if (sox_find_effect(w.c_str()) != nullptr || out.empty())
            out.push_back({w});
        else
            out.back().push_back(w);
    }
    return out;
}

sox_signalinfo_t outputSignal()
{
    sox_signalinfo_t s{};
    s.rate = kRate;
    s.channels = 1;
    s.precision = 16;
    return s;
}

sox_encodinginfo_t outputEncoding()
{
    sox_encodinginfo_t e{};
    e.encoding = SOX_ENCODING_SIGN2;
    e.bits_per_sample = 16;
    e.reverse_bytes = sox_option_default;
    e.reverse_nibbles = sox_option_default;
    e.reverse_bits = sox_option_default;
    return e;
}

// The last effect of a chain: keeps what reaches it, as a 16-bit file would (sox's own rounding
// and clipping), in the vector its private data points to. (Not sox's WAV writer into memory:
// libsox cannot tell whether such a stream can seek, and so now and then wrote a header of no
// length, which read back as an empty recording.)
int keepFlow(sox_effect_t *effp, const sox_sample_t *ibuf, sox_sample_t *, size_t *isamp,
             size_t *osamp)
{
    auto *kept = *static_cast<std::vector<short> **>(effp->priv);
    SOX_SAMPLE_LOCALS;
    for (size_t i = 0; i < *isamp; ++i)
        kept->push_back(static_cast<short>(SOX_SAMPLE_TO_SIGNED_16BIT(ibuf[i], effp->clips)));
    *osamp = 0;
    return SOX_SUCCESS;
}

const sox_effect_handler_t *keepHandler()
{
    static sox_effect_handler_t handler = {
        "keep",   nullptr, SOX_EFF_MCHAN, nullptr, nullptr,
        keepFlow, nullptr, nullptr,       nullptr, sizeof(std::vector<short> *)};
    return &handler;
}

// Runs `sox IN -r 16000 -c 1 -b 16 OUT EFFECTS...`, IN a format already open (or none: -n) and
// OUT the 16-bit samples; adds what sox's command line adds by itself (rate and channels to the
// output's, and dither to 16 bits).
std::optional<std::string> runChain(sox_format_t *in, const std::vector<std::string> &effectWords,
                                    std::vector<short> &samples)
{
    sox_format_t *nullIn = nullptr;
    if (!in) {
        // sox -n: the null file, 48 kHz and one channel as sox makes it when given no format.
        sox_signalinfo_t si = outputSignal();
        si.rate = 48000;
        si.precision = 0;
        nullIn = sox_open_read("", &si, nullptr, "null");
        in = nullIn;
        if (!in) return std::string("sox could not open its null input");
    }
    if (g_repeatable) sox_globals.ranqd1 = 0; // where a new `sox -R` starts its random numbers
    const sox_signalinfo_t outSi = outputSignal();
    const sox_encodinginfo_t outEnc = outputEncoding();
    sox_effects_chain_t *chain = sox_create_effects_chain(&in->encoding, &outEnc);
    sox_signalinfo_t signal = in->signal;
    std::optional<std::string> error;
    {
        char *args[] = {reinterpret_cast<char *>(in)};
        sox_effect_t *e = sox_create_effect(sox_find_effect("input"));
        sox_effect_options(e, 1, args);
        sox_add_effect(chain, e, &signal, &in->signal);
        std::free(e);
    }
    const std::vector<std::vector<std::string>> effects = effectList(effectWords);
    for (const auto &words : effects) {
        if ((error = addEffect(chain, words, &signal, &outSi))) break;
    }
    if (!error && signal.rate != kRate)
        error = addEffect(chain, {"rate", "16000"}, &signal, &outSi);
    if (!error && signal.channels != 1)
        error = addEffect(chain, {"channels", "1"}, &signal, &outSi);
    if (!error && (!effects.empty() || signal.precision > 16))
        error = addEffect(chain, {"dither"}, &signal, &outSi);
    if (!error) {
        samples.clear();
        sox_effect_t *e = sox_create_effect(keepHandler());
        *static_cast<std::vector<short> **>(e->priv) = &samples;
        sox_add_effect(chain, e, &signal, &outSi);
        std::free(e);
        // SOX_EOF: an effect ended the flow before the input did (synth given a length, reading
        // the endless null file), as with sox -n.
        const int flow = sox_flow_effects(chain, nullptr, nullptr);
        if (flow != SOX_SUCCESS && flow != SOX_EOF) error = std::string("sox's effects failed");
    }
    sox_delete_effects_chain(chain);
    if (nullIn) sox_close(nullIn);
    return error;
}

// Runs the chain on 16-bit samples at a rate (read as sox reads them from a WAV file).
std::optional<std::string> runChainOn(const std::vector<short> &in, int rate,
                                      const std::vector<std::string> &effectWords,
                                      std::vector<short> &out)
{
    std::vector<char> wav = wavInMemory(in, rate);
    sox_format_t *f = sox_open_mem_read(wav.data(), wav.size(), nullptr, nullptr, "wav");
    if (!f) return std::string("sox could not read samples in memory");
    std::optional<std::string> error = runChain(f, effectWords, out);
    sox_close(f);
    return error;
}

// Writes the 16 kHz mono samples as the WAV file sox writes (the same 44-byte header), to a
// temporary name first, so that a recording appears whole or not at all.
std::optional<std::string> writeWav(const std::string &path, const std::vector<short> &samples)
{
    const std::string tmp =
        path.substr(0, path.size() - (path.ends_with(".wav") ? 4 : 0)) + ".tmp.wav";
    const std::vector<char> wav = wavInMemory(samples, static_cast<int>(kRate));
    FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) return "cannot write '" + tmp + "': " + std::strerror(errno);
    const bool written = std::fwrite(wav.data(), 1, wav.size(), f) == wav.size();
    if (std::fclose(f) != 0 || !written || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        return "cannot write '" + path + "': " + why;
    }
    return std::nullopt;
}

std::optional<std::string> make(const Recipe &r)
{
    std::vector<short> speech;
    std::optional<std::string> error;
    if (r.source == Recipe::Source::Espeak) {
        std::vector<short> said;
        if ((error = speak(r, said))) return error;
        error = runChainOn(said, 22050, r.effects, speech);
    } else if (r.source == Recipe::Source::File) {
        sox_format_t *in = sox_open_read(r.file.c_str(), nullptr, nullptr, nullptr);
        if (!in) return "sox could not read '" + r.file + "'";
        error = runChain(in, r.effects, speech);
        sox_close(in);
    } else {
        error = runChain(nullptr, r.effects, speech);
    }
    if (error) return error;
    if (speech.empty())
        return std::string("no sound came out (the source is empty, or the effects left nothing)");
    if (!r.noiseColour.empty()) {
        // The noise floor, as `sox SPEECH NOISE rate 48000 synth 0 COLOUR vol LEVEL rate 16000`
        // made it (synth replaces the speech, keeping its length; -n's 48 kHz, so that white
        // noise keeps its level below 8 kHz), then `sox -m -v 1 SPEECH -v 1 NOISE`: their sum,
        // clipped to 16 bits.
        std::vector<short> noise;
        if ((error = runChainOn(speech, static_cast<int>(kRate),
                                {"rate", "48000", "synth", "0", r.noiseColour, "vol", r.noiseLevel,
                                 "rate", "16000"},
                                noise)))
            return error;
        for (size_t i = 0; i < speech.size() && i < noise.size(); ++i)
            speech[i] =
                static_cast<short>(std::clamp(int(speech[i]) + int(noise[i]), -32768, 32767));
    }
    return writeWav(r.out, speech);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 2 && std::strcmp(argv[1], "--repeatable") == 0) {
        g_repeatable = true;
    } else if (argc > 1) {
        std::cerr << "usage: flowbench-speak [--repeatable] < RECIPES\n"
                     "  one recipe a line: see the top of app/speak/main.cpp\n";
        return 2;
    }
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);

    sox_globals.verbosity = 1; // errors only, as sox -V1
    sox_globals.repeatable = g_repeatable ? sox_true : sox_false;
    if (!g_repeatable) // as sox seeds them, from the time (and the process: two start at once)
        sox_globals.ranqd1 =
            static_cast<sox_int32_t>(std::time(nullptr) ^ (static_cast<long>(getpid()) << 16));
    if (sox_init() != SOX_SUCCESS || sox_format_init() != SOX_SUCCESS) {
        std::cerr << "flowbench-speak: libsox did not start\n";
        return 1;
    }
    bool espeakReady = false;
    int failures = 0;
    std::string line;
    while (!g_stop && std::getline(std::cin, line)) {
        if (line.empty()) continue;
        Recipe r;
        std::optional<std::string> error = parse(line, r);
        if (!error && r.source == Recipe::Source::Espeak && !espeakReady) {
            if (espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr, 0) <= 0)
                error = std::string("espeak-ng did not start");
            else {
                espeak_SetSynthCallback(collect);
                espeakReady = true;
            }
        }
        if (!error) error = make(r);
        if (error) {
            ++failures;
            std::cerr << "flowbench-speak: " << (r.out.empty() ? line : r.out) << ": " << *error
                      << "\n";
        }
    }
    if (espeakReady) espeak_Terminate();
    sox_format_quit();
    sox_quit();
    return failures ? 1 : 0;
}
