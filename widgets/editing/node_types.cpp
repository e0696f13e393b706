#include "widgets/editing/node_types.h"

#include <QFile>

namespace fb::widgets {

const graph::NodeTypeRegistry &nodeTypes()
{
    static const graph::NodeTypeRegistry registry = [] {
        QFile file(QStringLiteral(":/flowbench/node_types.json"));
        if (!file.open(QIODevice::ReadOnly)) qFatal("the node types resource is missing");
        const QByteArray text = file.readAll();
        auto json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
        auto types = graph::nodeTypesFromJson(json);
        // Built into the binary and checked by test_cli: a failure here is a build defect.
        if (!types.ok()) qFatal("%s", types.error().str().c_str());
        return std::move(types).value();
    }();
    return registry;
}

} // namespace fb::widgets
