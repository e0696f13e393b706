#pragma once

namespace fb::widgets {

// How a node differs from the same node in another run's pipeline (the Runs panel's Diff).
enum class DiffMark { None, Changed, Added };

} // namespace fb::widgets
