package io.kinesisspark
object Placeholder
