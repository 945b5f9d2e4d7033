"""Why a case failed: classification, categories, the nearest ExportDB case, explanations."""
