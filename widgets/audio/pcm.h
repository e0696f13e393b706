#pragma once

#include <QAudioFormat>
#include <QByteArray>
#include <QStringList>

#include <cstddef>
#include <vector>

namespace fb::widgets {

// Raw microphone bytes as Qt Multimedia gives them (any sample format and channel count), for
// the panels that record: Try the Model (hold to record, Listen) and Record.

// The whole frames of `pcm`, their channels averaged: mono samples in [-1, 1] at the format's
// rate. A frame cut off at the end is left out; `used` (when given) says how many bytes were
// read, so the rest can wait for the next read.
std::vector<float> monoFromPcm(const QByteArray &pcm, const QAudioFormat &format,
                               qsizetype *used = nullptr);

// Samples in [-1, 1] as 16-bit little-endian integers, clipped at full scale.
QByteArray int16FromFloats(const float *x, size_t n);

// A WAV file (RIFF, 16-bit PCM) of raw samples in `format` (any sample format Qt Multimedia
// gives; written as 16-bit, channels kept).
QByteArray wavFromPcm(const QByteArray &pcm, const QAudioFormat &format);

// "*.wav", "*.flac", ...: the name patterns of data::recordingSuffixes(), for file dialogs
// ("Recordings (" + recordingPatterns().join(' ') + ")") and for the files a dropped folder gives.
QStringList recordingPatterns();

} // namespace fb::widgets
