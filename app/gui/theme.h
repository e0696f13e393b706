#pragma once

#include <QString>

namespace fb::app {

// Light and dark themes on the Fusion style. Qt 6.4 has no colour-scheme hint, so "system"
// follows the palette the platform gives (a dark desktop palette stays dark).
enum class Theme { System, Light, Dark };

Theme themeFromName(const QString &name);
QString themeName(Theme theme);
// Applies the style and palette to the whole application.
void applyTheme(Theme theme);

} // namespace fb::app
