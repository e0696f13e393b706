#include "widgets/files/atomic_write.h"

#include <QSaveFile>

namespace fb::widgets {

Status writeFileAtomically(const QString &path, std::string_view bytes, std::string_view what)
{
    QSaveFile file(path);
    auto failed = [&](const char *how) {
        return fileError(path.toStdString(), std::string(how) + " " + std::string(what) + ": " +
                                                 file.errorString().toStdString());
    };
    if (!file.open(QIODevice::WriteOnly)) return failed("cannot write");
    if (file.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size())) {
        file.cancelWriting();
        return failed("writing failed for");
    }
    if (!file.commit()) return failed("saving failed (an existing file is untouched) for");
    return {};
}

} // namespace fb::widgets
