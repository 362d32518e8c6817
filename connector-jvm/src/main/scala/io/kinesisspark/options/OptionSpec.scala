package io.kinesisspark.options

/**
 * One option: its name as users write it, what its value is ([[OptionKind]]) and its default. The options classes
 * (the source's, the connection's, enhanced fan-out's, the sink's) each define theirs and read values only through
 * them; [[OptionCatalog]] lists them all, for the data file the Python package checks values with.
 *
 * {{{
 *   val spec = OptionSpec("maxRecordsPerFetch", OptionKind.Integer(1, 10000), default = Some(10000L))
 *   spec.read(Map("maxRecordsPerFetch" -> "500").get)   // Some(500L)
 *   spec.valueOrDefault(Map.empty[String, String].get)   // 10000L
 * }}}
 *
 * @param default the value when the option is not given; `None` when there is none, or when it is not one value
 *                of the kind (it then depends on other options, such as `region`'s or `aggregation`'s)
 */
final case class OptionSpec[T](name: String, kind: OptionKind[T], default: Option[T] = None) {

  /** The option's value in `get` (a lookup by name, case-insensitive or not as the caller's is), read. */
  def read(get: String => Option[String]): Option[T] = get(name).map(kind.read(name, _))

  /** The option's value in `get`, or its default. */
  def valueOrDefault(get: String => Option[String]): T = orDefault(read(get))

  /** `value` (what [[read]] gave), or the default when there was none. */
  def orDefault(value: Option[T]): T =
    value.orElse(default).getOrElse(throw new IllegalStateException(s"option '$name' has no default"))

  /** The default as option text, for the catalog. */
  def renderedDefault: Option[String] = default.map(kind.render)
}
