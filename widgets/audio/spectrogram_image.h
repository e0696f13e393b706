#pragma once

#include <QImage>
#include <QRgb>

#include <cstdint>
#include <vector>

namespace fb::widgets {

// Pictures of recordings for people (the Record panel's clips, Listen mode's scrolling strip):
// the log-mel spectrogram the spoken-digits example trains on (40 bands, 512-sample windows every
// 10 ms; the engine's own core::data::Spectrogram), low frequencies at the bottom, one column per
// 10 ms.

// The log-mel levels, [40][frames] row-major, in dB (no floor). Empty for an empty recording.
std::vector<float> logMel(const std::vector<float> &samples, int64_t sampleRate, int *frames);

// Levels from `top - rangeDb` (dark) to `top` (bright) as a colour image.
QImage levelsImage(const std::vector<float> &db, int rows, int frames, float top, float rangeDb);

// The recording's picture, from its loudest cell down to 80 dB below it.
QImage spectrogramImage(const std::vector<float> &samples, int64_t sampleRate);

// A level from 0 to 1 as a colour: dark blue through magenta and orange to pale yellow (a
// perceptually ordered ramp like matplotlib's "magma", approximated by five stops).
QRgb heatColour(double level);

} // namespace fb::widgets
