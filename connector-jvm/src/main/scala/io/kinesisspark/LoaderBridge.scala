package io.kinesisspark

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream, ObjectStreamClass}

import scala.reflect.ClassTag

/**
 * Objects of the connector's classes that reach its driver code through a class loader other than its own. With the
 * jar added to a Spark Connect session (`spark.addArtifacts`), the connector's driver code is loaded by the session's
 * loader, while Spark deserializes task results and writers' commit messages with a loader of its own: the same
 * class names, different classes, so a plain type test fails and a typed array refuses them (ArrayStoreException).
 * `adopt` takes such an object over by Java serialization, resolving classes with the connector's loader. Objects
 * already of the connector's class, the usual case, are returned as they are.
 *
 * {{{
 *   messages.flatMap(LoaderBridge.adopt[KinesisWriterCommitMessage](_))
 * }}}
 */
object LoaderBridge {
  private val ownLoader = getClass.getClassLoader

  /** `obj` as a `T` of the connector's loader; `None` when it is no `T` of any loader. */
  def adopt[T <: AnyRef](obj: AnyRef)(implicit tag: ClassTag[T]): Option[T] = obj match {
    case t: T => Some(t)
    case null => None
    case other if other.getClass.getName == tag.runtimeClass.getName => Some(tag.runtimeClass.cast(copy(other)).asInstanceOf[T])
    case _ => None
  }

  private def copy(obj: AnyRef): AnyRef = fromBytes(toBytes(obj))

  /** `obj` Java-serialized: to cross a boundary whose other side may load the connector's classes differently. */
  def toBytes(obj: AnyRef): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    try out.writeObject(obj) finally out.close()
    bytes.toByteArray
  }

  /** What [[toBytes]] made, its classes resolved with the connector's loader first. */
  def fromBytes(bytes: Array[Byte]): AnyRef = {
    val in = new ObjectInputStream(new ByteArrayInputStream(bytes)) {
      override def resolveClass(desc: ObjectStreamClass): Class[_] =
        try Class.forName(desc.getName, false, ownLoader)
        catch { case _: ClassNotFoundException => super.resolveClass(desc) }
    }
    try in.readObject() finally in.close()
  }
}
