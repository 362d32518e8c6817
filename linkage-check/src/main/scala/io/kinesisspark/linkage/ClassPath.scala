package io.kinesisspark.linkage

import java.io.{File, InputStream}
import java.util.zip.ZipFile

import scala.collection.mutable

import org.objectweb.asm.{ClassReader, ClassVisitor, FieldVisitor, MethodVisitor, Opcodes}

/** A method or field of a class, as the JVM names it: name and descriptor. */
final case class Member(name: String, descriptor: String) {
  override def toString: String = name + descriptor
}

/** What linking needs of a class: its supertypes and the members it declares. */
final case class ClassInfo(name: String, superName: Option[String], interfaces: Seq[String], methods: Set[Member],
    fields: Set[Member])

/**
 * The classes of some jars plus the running JDK's, by internal name (`org/apache/spark/sql/Row`), read from their
 * class files without loading them: a Spark line's classes can be checked from any JVM, and a class whose
 * dependencies are absent is still read.
 *
 * {{{
 *   val spark = new ClassPath(new File(".venv/.../pyspark/jars").listFiles().toSeq)
 *   spark.resolvesMethod("org/apache/spark/sql/Row", Member("size", "()I"))   // true
 * }}}
 */
final class ClassPath(jars: Seq[File]) extends AutoCloseable {
  private val zips = jars.map(new ZipFile(_))
  private val cache = mutable.Map.empty[String, Option[ClassInfo]]
  // JDK classes only: the system class loader would also see this checker's own Scala library.
  private val jdk = ClassLoader.getPlatformClassLoader

  def info(name: String): Option[ClassInfo] = cache.getOrElseUpdate(name, open(name).map(read))

  /** `name`, its superclasses, then every interface they implement, each once; missing ones left out. */
  def ancestors(name: String): Seq[String] = {
    val seen = mutable.LinkedHashSet.empty[String]
    def visit(n: String): Unit = if (seen.add(n)) info(n).foreach { c =>
      c.superName.foreach(visit)
      c.interfaces.foreach(visit)
    }
    visit(name)
    // An interface's methods include Object's (JVMS 5.4.3.4), though it does not name Object as its superclass.
    (seen += "java/lang/Object").toSeq
  }

  /** Whether a call of `member` on `owner` links: declared by it or one of its ancestors (JVMS 5.4.3.3-4). */
  def resolvesMethod(owner: String, member: Member): Boolean = ancestors(owner).exists(info(_).exists(_.methods(member)))

  /** Whether an access of field `member` of `owner` links (JVMS 5.4.3.2). */
  def resolvesField(owner: String, member: Member): Boolean = ancestors(owner).exists(info(_).exists(_.fields(member)))

  override def close(): Unit = zips.foreach(_.close())

  private def open(name: String): Option[InputStream] = {
    val entry = name + ".class"
    zips.iterator.flatMap(z => Option(z.getEntry(entry)).map(z.getInputStream)).nextOption()
      .orElse(Option(jdk.getResourceAsStream(entry)))
  }

  private def read(in: InputStream): ClassInfo =
    try {
      val methods, fields = mutable.Set.empty[Member]
      var header: (String, Option[String], Seq[String]) = null
      new ClassReader(in).accept(new ClassVisitor(Opcodes.ASM9) {
        override def visit(version: Int, access: Int, name: String, signature: String, superName: String,
            interfaces: Array[String]): Unit = header = (name, Option(superName), interfaces.toSeq)
        override def visitMethod(access: Int, name: String, descriptor: String, signature: String,
            exceptions: Array[String]): MethodVisitor = { methods += Member(name, descriptor); null }
        override def visitField(access: Int, name: String, descriptor: String, signature: String,
            value: Any): FieldVisitor = { fields += Member(name, descriptor); null }
      }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES)
      ClassInfo(header._1, header._2, header._3, methods.toSet, fields.toSet)
    } finally in.close()
}
