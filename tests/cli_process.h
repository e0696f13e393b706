#pragma once

// flowbench-cli as the tests run it: the real binary in a child process, its exit code, its
// output, and its last stdout line parsed (the summary object of the CLI contract); and the
// JSON files it writes.

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>

struct CliResult {
    int exitCode = -1; // -1: it crashed or did not finish in time
    QString out, err;
    QJsonObject summary; // the last stdout line, parsed
};

// Any program run the same way (mpirun starting flowbench-cli, in test_distributed).
inline CliResult runProgram(const QString &program, const QStringList &args,
                            const QByteArray &stdinText = {}, int timeoutMs = 300000,
                            const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProgram(program);
    p.setArguments(args);
    p.start();
    if (!stdinText.isEmpty()) p.write(stdinText);
    p.closeWriteChannel();
    p.waitForFinished(timeoutMs);
    CliResult r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    const QStringList lines = r.out.trimmed().split('\n');
    if (!lines.isEmpty()) r.summary = QJsonDocument::fromJson(lines.last().toUtf8()).object();
    return r;
}

inline CliResult runCli(const QStringList &args, const QByteArray &stdinText = {},
                        int timeoutMs = 300000,
                        const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    return runProgram(FLOWBENCH_CLI, args, stdinText, timeoutMs, env);
}

// A JSON file's object (empty when it is missing or not an object).
inline QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline bool writeJson(const QString &path, const QJsonObject &o)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(o).toJson()) > 0;
}
